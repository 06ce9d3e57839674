/**
 * The one stylesheet of the share and portal pages. Colours meet WCAG AA contrast on their
 * backgrounds (body text ≥ 12:1, muted text ≥ 7:1, badges and buttons ≥ 4.5:1); every
 * interactive element has a visible focus ring; below 720 px tables scroll inside their own
 * region and the edit form's item rows stack with their labels shown.
 */
export const PAGE_STYLES = `
*,*::before,*::after{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;font-size:100%;line-height:1.5;color:#1a1a1a;background:#f4f5f7}
body{margin:0}
a{color:#0b4fc4}
a:hover{color:#083a91}
:focus-visible{outline:3px solid #0b4fc4;outline-offset:2px}
.skip-link{position:absolute;left:-9999px;top:0;background:#fff;padding:.5rem 1rem;z-index:10}
.skip-link:focus{left:1rem;top:1rem}
.visually-hidden{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.site-header,.site-footer{background:#fff;border-bottom:1px solid #d0d4da;padding:.75rem 1rem}
.site-footer{border-top:1px solid #d0d4da;border-bottom:0;color:#4a4f57;font-size:.875rem;margin-top:2rem}
.site-header p,.site-footer p{margin:0;max-width:60rem;margin-inline:auto}
main{max-width:60rem;margin:1.5rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #d0d4da;border-radius:8px;padding:1.25rem;margin-bottom:1.25rem}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .75rem}
h2{font-size:1.125rem;margin:0 0 .75rem}
.muted{color:#4a4f57}
.badges{display:flex;flex-wrap:wrap;gap:.5rem;margin:0 0 1rem;padding:0;list-style:none}
.badge{display:inline-block;border-radius:999px;padding:.125rem .75rem;font-size:.875rem;font-weight:600;background:#e8eaee;color:#1a1a1a;border:1px solid #b9bec6}
.badge--paid{background:#e3f4e8;color:#0b5d1e;border-color:#8cc79d}
.badge--issued,.badge--sent,.badge--viewed{background:#e6efff;color:#0a3d91;border-color:#9bb8ec}
.badge--cancelled,.badge--restricted{background:#fde8e8;color:#8a1212;border-color:#eba3a3}
.badge--payment_reported{background:#fff4d6;color:#6b4a00;border-color:#e0c36b}
.parties{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:1rem}
.requisites{margin:0;display:grid;grid-template-columns:fit-content(45%) minmax(0,1fr);gap:.125rem .75rem}
.requisites dt{color:#4a4f57}
.requisites dd{margin:0;overflow-wrap:anywhere}
.card li{overflow-wrap:anywhere}
.table-scroll{overflow-x:auto;border:1px solid #d0d4da;border-radius:6px}
table{border-collapse:collapse;width:100%;font-size:.9375rem}
th,td{padding:.5rem .625rem;border-bottom:1px solid #e1e4e8;text-align:left;vertical-align:top}
thead th{background:#f0f2f5;font-weight:600}
td.num,th.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
tbody th{font-weight:400}
.totals{margin:1rem 0 0 auto;max-width:26rem;display:grid;grid-template-columns:1fr max-content;gap:.25rem 1rem}
.totals dt{text-align:right}
.totals dd{margin:0;text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
.totals .grand{font-weight:700;font-size:1.0625rem}
.words{font-weight:600}
.pay{display:grid;grid-template-columns:minmax(0,1fr) auto;gap:1.25rem;align-items:start}
.qr img{display:block;width:12rem;height:12rem;border:1px solid #d0d4da;background:#fff}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;align-items:center;margin-top:1rem}
.button,button{display:inline-block;font:inherit;font-weight:600;border-radius:6px;padding:.5rem 1rem;border:2px solid #0b4fc4;background:#0b4fc4;color:#fff;text-decoration:none;cursor:pointer}
.button:hover,button:hover{background:#083a91;border-color:#083a91;color:#fff}
.button--secondary,button.button--secondary{background:#fff;color:#0b4fc4}
.button--secondary:hover,button.button--secondary:hover{background:#e6efff;color:#083a91}
.notice{border-left:4px solid #0b4fc4;background:#eef4ff;padding:.75rem 1rem;margin:0 0 1rem}
.notice--ok{border-color:#0b5d1e;background:#e3f4e8}
.notice--error{border-color:#b00020;background:#fde8e8}
.notice--warn{border-color:#8a6100;background:#fff4d6}
.notice ul{margin:.25rem 0 0;padding-left:1.25rem}
form fieldset{border:1px solid #d0d4da;border-radius:6px;padding:1rem;margin:0 0 1.25rem}
legend{font-weight:700;padding:0 .25rem}
.fields{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.75rem 1rem}
.field{display:flex;flex-direction:column;gap:.25rem}
.field--check{flex-direction:row;align-items:center;gap:.5rem}
label{font-weight:600}
input,select,textarea{font:inherit;color:#1a1a1a;background:#fff;border:1px solid #6b7280;border-radius:4px;padding:.375rem .5rem;min-width:0;width:100%}
input[type=checkbox]{width:1.125rem;height:1.125rem}
textarea{min-height:4rem;resize:vertical}
[aria-invalid=true]{border-color:#b00020;border-width:2px}
.error{color:#b00020;font-weight:600;font-size:.875rem;margin:0}
.warning{color:#6b4a00;font-size:.875rem;margin:0}
.rows td{padding:.375rem}
.rows th.wide{width:38%}
.rows select{min-width:7rem}
.rows td.num{padding-top:.75rem}
.qr{margin:0}
.rows td.remove{white-space:nowrap}
.js .nojs-only{display:none}
@media (max-width:720px){
  h1{font-size:1.25rem}
  .pay{grid-template-columns:1fr}
  .rows thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
  .rows,.rows tbody,.rows tr,.rows td{display:block;width:100%}
  .rows tr{border-bottom:2px solid #d0d4da;padding:.5rem 0}
  .rows .row-label{position:static;width:auto;height:auto;margin:0;overflow:visible;clip:auto;white-space:normal}
}
@media print{
  html{background:#fff}
  .site-header,.site-footer,.actions,.skip-link{display:none}
  .card{border:0;padding:0}
}
`;
