/**
 * The edit form's script, served as a static file (CSP `script-src 'self'`, nothing inline).
 * Progressive enhancement only: without it the form still works through its spare empty rows
 * and "Удалить" checkboxes. With it, rows are added from a <template> and removed with a
 * button, and a polite live region announces the change to screen readers.
 *
 * New rows are built by cloning the template and rewriting the `__i__` placeholder in
 * attributes (and `__n__`, the 1-based row number, in text), never through innerHTML.
 */
export const EDIT_FORM_SCRIPT = `(function () {
  'use strict';
  document.documentElement.classList.add('js');

  function rewrite(node, index) {
    if (node.nodeType === 3) {
      node.nodeValue = node.nodeValue.split('__n__').join(String(index + 1));
      return;
    }
    if (node.nodeType !== 1) return;
    for (var i = 0; i < node.attributes.length; i++) {
      var attr = node.attributes[i];
      if (attr.value.indexOf('__') !== -1) {
        node.setAttribute(attr.name, attr.value.split('__i__').join(String(index)).split('__n__').join(String(index + 1)));
      }
    }
    for (var c = 0; c < node.childNodes.length; c++) rewrite(node.childNodes[c], index);
  }

  function announce(group, text) {
    var live = group.querySelector('[data-live]');
    if (live) live.textContent = text;
  }

  function setup(group) {
    var template = group.querySelector('template[data-row-template]');
    var rows = group.querySelector('[data-rows]');
    var add = group.querySelector('[data-add-row]');
    if (!template || !rows || !add) return;
    var max = Number(group.getAttribute('data-max') || '1000');

    add.hidden = false;
    var removers = group.querySelectorAll('[data-remove-row]');
    for (var r = 0; r < removers.length; r++) removers[r].hidden = false;

    add.addEventListener('click', function () {
      if (rows.children.length >= max) {
        announce(group, 'Достигнуто максимальное число строк: ' + max);
        return;
      }
      var index = Number(group.getAttribute('data-next-index') || '0');
      group.setAttribute('data-next-index', String(index + 1));
      var fragment = template.content.cloneNode(true);
      for (var n = 0; n < fragment.childNodes.length; n++) rewrite(fragment.childNodes[n], index);
      var row = fragment.querySelector('tr');
      var remover = fragment.querySelector('[data-remove-row]');
      if (remover) remover.hidden = false;
      rows.appendChild(fragment);
      announce(group, 'Строка добавлена');
      var first = row && row.querySelector('input, select, textarea');
      if (first) first.focus();
    });

    group.addEventListener('click', function (event) {
      var target = event.target;
      var button = target && target.closest ? target.closest('[data-remove-row]') : null;
      if (!button || !group.contains(button)) return;
      var row = button.closest('tr');
      if (row) row.parentNode.removeChild(row);
      announce(group, 'Строка удалена');
      add.focus();
    });
  }

  var groups = document.querySelectorAll('[data-repeat]');
  for (var g = 0; g < groups.length; g++) setup(groups[g]);
})();
`;
