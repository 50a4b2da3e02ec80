// Outbound console: small progressive enhancements of our own. Every page
// works without this file; it only saves a round trip here and there.
(function () {
  "use strict";
  // Forms marked data-confirm ask in place instead of showing the
  // confirmation page the server would otherwise render.
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    var question = form.getAttribute("data-confirm");
    if (!question) return;
    if (!window.confirm(question)) {
      ev.preventDefault();
      return;
    }
    var marker = document.createElement("input");
    marker.type = "hidden";
    marker.name = "confirmed";
    marker.value = "yes";
    form.appendChild(marker);
  });
  // Filter forms marked data-drop-empty leave their empty fields out of
  // the link (the server would redirect to the same view without them).
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.hasAttribute("data-drop-empty") || ev.defaultPrevented) return;
    var emptied = Array.prototype.filter.call(form.elements, function (el) {
      return el.name && !el.disabled && typeof el.value === "string" && el.value.trim() === "";
    });
    emptied.forEach(function (el) { el.disabled = true; });
    // A page restored from the back/forward cache gets its fields back.
    window.addEventListener("pageshow", function () {
      emptied.forEach(function (el) { el.disabled = false; });
    }, { once: true });
  });
  // "Add another parameter" adds an empty row in place: a copy of the
  // last row with the next index, and the row count the server reads.
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("[data-add-row]");
    if (!btn) return;
    var kind = btn.getAttribute("data-add-row");
    var box = btn.closest("fieldset");
    var count = box && box.querySelector('input[name="' + kind + '_rows"]');
    var rows = box ? box.querySelectorAll('[data-testid="' + kind + '-row"]') : [];
    if (!count || rows.length === 0) return;
    ev.preventDefault();
    var n = parseInt(count.value, 10) || rows.length;
    var last = rows[rows.length - 1];
    var row = last.cloneNode(true);
    row.classList.add("row-blank");
    row.querySelectorAll("input, select").forEach(function (el) {
      el.name = el.name.replace(/_\d+$/, "_" + n);
      el.removeAttribute("autofocus");
      if (el.type === "checkbox") el.checked = false;
      else if (el.tagName === "SELECT") el.selectedIndex = 0;
      else el.value = "";
    });
    last.parentNode.insertBefore(row, last.nextSibling);
    count.value = String(n + 1);
    var first = row.querySelector("input");
    if (first) first.focus();
  });
  // A search box marked data-filter-rows hides, as the admin types, the
  // rows (data-testid) whose data-entry does not contain the text; a
  // hidden row's checkbox is cleared so it is never removed unseen.
  function filterRows(box) {
    var kind = box.getAttribute && box.getAttribute("data-filter-rows");
    if (!kind) return;
    var needle = box.value.trim().toLowerCase();
    document.querySelectorAll('[data-testid="' + kind + '"]').forEach(function (row) {
      var hide = needle !== "" && (row.getAttribute("data-entry") || "").toLowerCase().indexOf(needle) < 0;
      row.hidden = hide;
      if (hide) row.querySelectorAll('input[type="checkbox"]').forEach(function (c) { c.checked = false; });
    });
  }
  document.addEventListener("input", function (ev) { filterRows(ev.target); });
  // Text can be in a box before this file runs (typed while a slow
  // network still brought it, or put back by the browser on Back): filter
  // by it now, not only at the next keystroke.
  document.querySelectorAll("[data-filter-rows]").forEach(function (box) {
    if (box.value.trim() !== "") filterRows(box);
  });
  // A blank parameter row stops looking blank once something is typed.
  function unblankRow(input) {
    var row = input.closest && input.closest(".row-blank");
    if (row) row.classList.remove("row-blank");
  }
  document.addEventListener("input", function (ev) { unblankRow(ev.target); });
  // Renaming an integration: show the warning (and its confirm box) as
  // soon as the name differs from the stored one, not only after a save.
  function showRenameWarning(input) {
    if (input.name !== "name" || !input.form) return;
    var warning = input.form.querySelector("[data-rename-from]");
    if (!warning) return;
    warning.hidden = input.value.trim() === warning.getAttribute("data-rename-from");
  }
  document.addEventListener("input", function (ev) { showRenameWarning(ev.target); });
  // The same for what was typed before this file ran: a row is blank by
  // its text fields, as the server marks it (a checkbox has a value).
  document.querySelectorAll(".row-blank input:not([type=checkbox]):not([type=hidden])").forEach(function (input) {
    if (input.value) unblankRow(input);
  });
  document.querySelectorAll('form input[name="name"]').forEach(showRenameWarning);
  // A "copy" button next to a token or command copies it.
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("[data-copy]");
    if (!btn || !navigator.clipboard) return;
    var src = document.getElementById(btn.getAttribute("data-copy"));
    if (!src) return;
    navigator.clipboard.writeText(src.textContent.trim()).then(function () {
      btn.textContent = "Copied";
    });
  });
})();
