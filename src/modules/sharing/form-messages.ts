/**
 * Russian messages for the edit page. The API's validation issues carry a machine code and an
 * English message; the page shows the Russian text of the code next to the field and falls
 * back to the API's message for a code it does not know, so nothing is ever hidden.
 */

export interface Issue {
  field: string;
  code: string;
  message: string;
}

function number(message: string, pattern: RegExp): string | null {
  return pattern.exec(message)?.[1] ?? null;
}

/** The Russian text of one validation error. */
export function errorMessageRu(issue: Issue): string {
  const m = issue.message;
  switch (issue.code) {
    case 'required':
      return 'Заполните это поле';
    case 'invalid_type':
      return 'Значение в неверном формате';
    case 'out_of_range': {
      const greater = number(m, /greater than (-?[\d.]+)/);
      if (greater !== null) return `Значение должно быть больше ${greater.replace('.', ',')}`;
      const least = number(m, /at least (-?[\d.]+)/);
      if (least !== null) return `Значение должно быть не меньше ${least.replace('.', ',')}`;
      const years = /years (\d+)\D+(\d+)/.exec(m);
      if (years) return `Год должен быть от ${years[1]} до ${years[2]}`;
      const most = number(m, /at most (-?[\d.]+)/);
      if (most !== null) return `Значение должно быть не больше ${most.replace('.', ',')}`;
      return 'Значение вне допустимых пределов';
    }
    case 'too_many_decimals': {
      const n = number(m, /at most (\d+) decimals/);
      return n === null ? 'Слишком много знаков после запятой' : `Не больше ${n} знаков после запятой`;
    }
    case 'too_long': {
      const n = number(m, /at most (\d+) characters/);
      return n === null ? 'Слишком длинное значение' : `Не длиннее ${n} символов`;
    }
    case 'invalid_value':
      return 'Выберите значение из списка';
    case 'invalid_format':
      return issue.field.endsWith('date') ? 'Введите дату в формате ГГГГ-ММ-ДД' : 'Значение в неверном формате';
    case 'invalid_date':
      return 'Такой даты нет в календаре';
    case 'invalid_currency':
      return 'Выберите валюту из списка';
    case 'invalid_character':
      return 'Недопустимый символ в значении';
    case 'too_many_items':
      return 'Слишком много строк';
    case 'too_deep':
      return 'Слишком глубокая вложенность данных';
    case 'prohibited_field':
      return 'Ссылки и изображения в полях документа не допускаются';
    default:
      return m;
  }
}

/** The Russian text of one validation warning (checksums, unusual rates). */
export function warningMessageRu(issue: Issue): string {
  switch (issue.code) {
    case 'inn_checksum':
      return 'ИНН не проходит проверку контрольного числа';
    case 'kpp_format':
      return 'КПП в неверном формате: 9 символов (4 цифры, 2 цифры или заглавные буквы, 3 цифры)';
    case 'bik_format':
      return 'БИК: 9 цифр, начинается с 0, 1 или 2';
    case 'account_checksum':
      return 'Расчётный счёт: 20 цифр, контрольный ключ должен сходиться с БИК';
    case 'corr_account_checksum':
      return 'Корреспондентский счёт: 20 цифр, должен сходиться с БИК';
    case 'unusual_vat_rate':
      return 'Необычная ставка НДС';
    case 'edo_id_format':
      return 'Идентификатор ЭДО в необычном формате';
    case 'seller_edo_id_missing':
      return 'У организации продавца нет идентификатора ЭДО: документ не будет отправлен через ЭДО';
    default:
      return issue.message;
  }
}

/** Issues as the page's path → message map; the first issue of a path wins. */
export function messagesByField(issues: readonly Issue[], text: (issue: Issue) => string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const issue of issues) if (!Object.hasOwn(out, issue.field)) out[issue.field] = text(issue);
  return out;
}
