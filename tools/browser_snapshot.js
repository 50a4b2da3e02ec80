// The live page as text for the browser tools: every interactive element
// is marked with a ref, e.g. [e12 link "Pricing" → /pricing], and the
// elements are returned in ref order so the tool can act on them. It runs
// in the page (page.evaluateHandle) and reads only: it sets no attribute
// the page could forge or see. Called with the first ref number.
(base) => {
  const parts = [];
  const elements = [];
  const MAX_ELEMENTS = 1500;
  const CAP = 160;
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE']);
  const ROLES = new Set(['button', 'link', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'checkbox', 'radio',
    'switch', 'option', 'combobox', 'textbox', 'searchbox', 'treeitem']);
  const squash = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const cap = (s, n = CAP) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
  const quote = (s) => '"' + cap(squash(s)).replace(/"/g, "'") + '"';
  const nl = () => parts.push('\n');
  const visible = (el) => {
    if (el.checkVisibility) return el.checkVisibility({ visibilityProperty: true });
    const s = getComputedStyle(el);
    return s.display !== 'none' && s.visibility !== 'hidden';
  };
  const isBlock = (el) => {
    const d = getComputedStyle(el).display;
    return !(d === 'inline' || d === 'inline-block' || d === 'inline-flex' || d === 'contents');
  };
  const where = (href) => {
    try {
      const u = new URL(href, location.href);
      return u.origin === location.origin ? (u.pathname + u.search + u.hash) : u.href;
    } catch (e) { return href; }
  };
  const kindOf = (el) => {
    const tag = el.tagName;
    if ((tag === 'A' || tag === 'AREA') && el.hasAttribute('href')) return 'link';
    if (tag === 'BUTTON' || tag === 'SUMMARY') return 'button';
    if (tag === 'INPUT') return (el.type || 'text').toLowerCase() === 'hidden' ? null : 'input';
    if (tag === 'SELECT') return 'select';
    if (tag === 'TEXTAREA') return 'textarea';
    const role = (el.getAttribute('role') || '').toLowerCase();
    if (ROLES.has(role)) return role;
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return 'editable';
    if (el.hasAttribute('onclick')) return 'clickable';
    return null;
  };
  // A label's words without the controls it wraps (a select's options).
  const ownText = (n) => {
    if (n.nodeType === Node.TEXT_NODE) return n.textContent;
    if (n.nodeType !== Node.ELEMENT_NODE || ['SELECT', 'TEXTAREA', 'INPUT', 'BUTTON', 'SCRIPT', 'STYLE'].includes(n.tagName)) return '';
    return Array.from(n.childNodes).map(ownText).join(' ');
  };
  const labelOf = (el) => {
    const aria = el.getAttribute('aria-label');
    if (aria) return squash(aria);
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const t = by.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean).map((n) => n.innerText).join(' ');
      if (squash(t)) return squash(t);
    }
    if (el.labels && el.labels.length) {
      const t = Array.from(el.labels).map((l) => ownText(l)).join(' ');
      if (squash(t)) return squash(t);
    }
    return squash(el.getAttribute('placeholder') || el.getAttribute('title') || el.getAttribute('name') || el.getAttribute('id') || '');
  };
  const textOf = (el) => squash(el.innerText || el.textContent || '') || squash(el.getAttribute('aria-label') || el.getAttribute('title') || '') ||
    squash(Array.from(el.querySelectorAll('img[alt]')).map((i) => i.alt).join(' '));
  const submits = (el) => {
    const tag = el.tagName;
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (!el.form) return '';
    if ((tag === 'BUTTON' && (type === '' || type === 'submit')) || (tag === 'INPUT' && (type === 'submit' || type === 'image'))) {
      const f = el.form;
      const method = (el.getAttribute('formmethod') || f.getAttribute('method') || 'get').toUpperCase();
      const action = el.getAttribute('formaction') || f.getAttribute('action') || location.href;
      return ', submits the form (' + method + ' ' + where(action) + ')';
    }
    return '';
  };
  const flags = (el) => {
    let s = '';
    if (el.disabled) s += ', disabled';
    if (el.required) s += ', required';
    if (el.readOnly) s += ', read-only';
    return s;
  };
  const marker = (el, kind, ref) => {
    const r = 'e' + ref;
    switch (kind) {
      case 'link': return '[' + r + ' link ' + quote(textOf(el)) + ' → ' + cap(where(el.getAttribute('href')), 200) + ']';
      case 'button': return '[' + r + ' button ' + quote(textOf(el)) + submits(el) + flags(el) + ']';
      case 'select': {
        const chosen = Array.from(el.selectedOptions).map((o) => squash(o.label)).join(', ');
        const opts = Array.from(el.options).slice(0, 12).map((o) => squash(o.label));
        const more = el.options.length > 12 ? ', … ' + (el.options.length - 12) + ' more' : '';
        return '[' + r + ' select ' + quote(labelOf(el)) + ' = ' + quote(chosen) + '; options: ' + cap(opts.join(', '), 400) + more + flags(el) + ']';
      }
      case 'textarea': return '[' + r + ' text area ' + quote(labelOf(el)) + ' value ' + quote(el.value) + flags(el) + ']';
      case 'input': {
        const type = (el.type || 'text').toLowerCase();
        if (type === 'submit' || type === 'button' || type === 'reset' || type === 'image') {
          return '[' + r + ' button ' + quote(el.value || el.alt || labelOf(el) || type) + submits(el) + flags(el) + ']';
        }
        if (type === 'checkbox' || type === 'radio') {
          return '[' + r + ' ' + type + ' ' + quote(labelOf(el)) + (el.checked ? ' checked' : ' not checked') + flags(el) + ']';
        }
        if (type === 'password') {
          return '[' + r + ' password field ' + quote(labelOf(el)) + (el.value ? ' (filled)' : ' (empty)') + flags(el) + ']';
        }
        if (type === 'file') return '[' + r + ' file field ' + quote(labelOf(el)) + ' (uploading files is not supported)]';
        return '[' + r + ' ' + type + ' field ' + quote(labelOf(el)) + ' value ' + quote(el.value) + flags(el) + ']';
      }
      case 'editable': return '[' + r + ' editable ' + quote(labelOf(el)) + ' value ' + quote(el.innerText) + ']';
      case 'tab': case 'option': case 'menuitem': case 'treeitem': {
        const sel = el.getAttribute('aria-selected') === 'true' || el.getAttribute('aria-current') ? ' selected' : '';
        return '[' + r + ' ' + kind + ' ' + quote(textOf(el)) + sel + ']';
      }
      case 'checkbox': case 'radio': case 'switch': case 'menuitemcheckbox': case 'menuitemradio':
        return '[' + r + ' ' + kind + ' ' + quote(textOf(el) || labelOf(el)) + (el.getAttribute('aria-checked') === 'true' ? ' checked' : ' not checked') + ']';
      case 'textbox': case 'searchbox': case 'combobox':
        return '[' + r + ' ' + kind + ' ' + quote(labelOf(el)) + ' value ' + quote(el.innerText || el.value || '') + ']';
    }
    return '[' + r + ' ' + kind + ' ' + quote(textOf(el)) + ']';
  };
  // Containers (a card with onclick, a role=option holding links) keep
  // their inner elements reachable: the marker comes first, then the
  // walk goes on inside.
  const leaf = (kind) => kind === 'link' || kind === 'button' || kind === 'input' || kind === 'select' || kind === 'textarea' || kind === 'editable';
  const walk = (node, depth) => {
    if (depth > 200) return;
    if (node.nodeType === Node.TEXT_NODE) {
      const t = node.textContent.replace(/\s+/g, ' ');
      if (t.trim()) parts.push(t);
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const el = node;
    if (SKIP.has(el.tagName) || !visible(el)) return;
    if (el.tagName === 'BR') { nl(); return; }
    if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') { parts.push(' (a frame: ' + cap(where(el.src || ''), 200) + ') '); return; }
    if (el.tagName === 'IMG') {
      if (squash(el.alt)) parts.push(' (image: ' + cap(squash(el.alt), 80) + ') ');
      return;
    }
    const block = isBlock(el);
    if (block) nl();
    const h = /^H([1-6])$/.exec(el.tagName);
    if (h) parts.push('#'.repeat(Number(h[1])) + ' ');
    if (el.tagName === 'LI') parts.push('- ');
    const kind = kindOf(el);
    if (kind && elements.length < MAX_ELEMENTS) {
      parts.push(' ' + marker(el, kind, base + elements.length) + ' ');
      elements.push(el);
      if (leaf(kind)) { if (block) nl(); return; }
    }
    if (el.tagName === 'TD' || el.tagName === 'TH') parts.push(' | ');
    for (const child of el.childNodes) walk(child, depth + 1);
    if (el.shadowRoot) for (const child of el.shadowRoot.childNodes) walk(child, depth + 1);
    if (block) nl();
  };
  if (document.body) walk(document.body, 0);
  const text = parts.join('').split('\n').map((l) => l.replace(/[ \t]+/g, ' ').trim()).filter((l, i, all) => l !== '' || (i > 0 && all[i - 1] !== ''))
    .join('\n').replace(/\n{3,}/g, '\n\n').trim();
  return { text, elements };
}
