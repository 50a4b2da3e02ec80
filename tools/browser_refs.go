package tools

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/playwright-community/playwright-go"

	"github.com/outboundhq/outbound/guard"
)

// maxRefLength bounds a ref in the schemas: e followed by digits.
const maxRefLength = 16

// refFix is what to do about any bad ref.
const refFix = "Call " + BrowserReadName + " for the page as it is now, and use a ref from that answer."

// element finds the element of ref in the latest answer. A ref from an
// earlier answer, one never handed out, and one whose element a script
// has since removed are each refused with what to do.
func (tb *tab) element(tool, ref string) (playwright.ElementHandle, elementInfo, *guard.Refusal) {
	bad := func(msg string) (playwright.ElementHandle, elementInfo, *guard.Refusal) {
		return nil, elementInfo{}, &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonStaleRef, Kind: guard.KindPolicy, Tool: tool, URL: tb.page.URL(),
			Message: msg, Fix: refFix}
	}
	n, ok := parseRef(ref)
	switch {
	case !ok:
		return bad(fmt.Sprintf("%q is not a ref; refs look like e12, as the page's text marks them.", cut(ref, 40)))
	case tb.count == 0 && n < tb.next:
		return bad(fmt.Sprintf("e%d is from an earlier answer, and the latest answer has no refs: the page has no links, buttons or fields now.", n))
	case n < tb.base:
		return bad(fmt.Sprintf("e%d is from an earlier answer; each answer hands out new refs, and only the latest answer's (e%d to e%d) work.", n, tb.base, tb.base+tb.count-1))
	case n >= tb.base+tb.count:
		return bad(fmt.Sprintf("There is no e%d on the page; the latest answer's refs are e%d to e%d.", n, tb.base, tb.base+tb.count-1))
	}
	el, err := elementAt(tb.page, tb.elements, n-tb.base)
	if err != nil {
		return bad(fmt.Sprintf("The element e%d is no longer on the page: a script removed or replaced it since the last answer.", n))
	}
	info, err := describe(el)
	if err != nil || !info.Connected {
		return bad(fmt.Sprintf("The element e%d is no longer on the page: a script removed or replaced it since the last answer.", n))
	}
	return el, info, nil
}

// parseRef reads e12 (also [e12] or E12) as 12.
func parseRef(s string) (int, bool) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "[]"))
	if len(s) < 2 || (s[0] != 'e' && s[0] != 'E') {
		return 0, false
	}
	n, err := strconv.Atoi(s[1:])
	return n, err == nil && n > 0 && s[1] != '+'
}

// elementInfo is what a click or typing needs to know about an element
// before acting: whether it submits a form (a side effect), where to and
// with what, and whether it takes text.
type elementInfo struct {
	Connected bool       `json:"connected"`
	Kind      string     `json:"kind"`
	Label     string     `json:"label"`
	Submits   bool       `json:"submits"`
	Method    string     `json:"method"`
	Action    string     `json:"action"`
	Fields    [][]string `json:"fields"`
	Editable  bool       `json:"editable"`
	Select    bool       `json:"select"`
	Disabled  bool       `json:"disabled"`
	ReadOnly  bool       `json:"readonly"`
}

const describeJS = `(el) => {
  const squash = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const tag = el.tagName;
  const type = (el.getAttribute('type') || '').toLowerCase();
  const itype = (el.type || '').toLowerCase();
  const ownText = (n) => {
    if (n.nodeType === Node.TEXT_NODE) return n.textContent;
    if (n.nodeType !== Node.ELEMENT_NODE || ['SELECT', 'TEXTAREA', 'INPUT', 'BUTTON', 'SCRIPT', 'STYLE'].includes(n.tagName)) return '';
    return Array.from(n.childNodes).map(ownText).join(' ');
  };
  const label = squash(el.getAttribute('aria-label') || (el.labels && el.labels[0] && squash(ownText(el.labels[0]))) ||
    el.getAttribute('placeholder') || el.getAttribute('name') || el.innerText || el.value || tag.toLowerCase()).slice(0, 80);
  const out = {connected: el.isConnected, kind: tag.toLowerCase() + (itype ? ' ' + itype : ''), label, submits: false, method: '', action: '', fields: [],
    editable: false, select: tag === 'SELECT', disabled: !!el.disabled, readonly: !!el.readOnly};
  const f = el.form;
  if (f && ((tag === 'BUTTON' && (type === '' || type === 'submit')) || (tag === 'INPUT' && (type === 'submit' || type === 'image')))) {
    const method = (el.getAttribute('formmethod') || f.getAttribute('method') || 'get').toUpperCase();
    if (method !== 'DIALOG') {
      out.submits = true;
      out.method = method;
      out.action = new URL(el.getAttribute('formaction') || f.getAttribute('action') || location.href, location.href).href;
      for (const e of f.elements) {
        const t = (e.type || '').toLowerCase();
        if (!e.name || e.disabled || ['submit', 'button', 'image', 'reset', 'file'].includes(t)) continue;
        if ((t === 'checkbox' || t === 'radio') && !e.checked) continue;
        out.fields.push([e.name, t === 'password' ? '(a password)' : String(e.value).slice(0, 200)]);
        if (out.fields.length >= 20) break;
      }
    }
  }
  const noText = ['checkbox', 'radio', 'submit', 'button', 'image', 'reset', 'file', 'hidden', 'range', 'color'];
  out.editable = tag === 'TEXTAREA' || el.isContentEditable || (tag === 'INPUT' && !noText.includes(itype || 'text')) ||
    ['textbox', 'searchbox', 'combobox'].includes((el.getAttribute('role') || '').toLowerCase());
  return out;
}`

// describe reads an element's elementInfo in the page.
func describe(el playwright.ElementHandle) (elementInfo, error) {
	v, err := el.Evaluate(describeJS)
	if err != nil {
		return elementInfo{}, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return elementInfo{}, err
	}
	var info elementInfo
	err = json.Unmarshal(raw, &info)
	return info, err
}

// submission says in words what submitting the form sends where.
func (i elementInfo) submission() string {
	var fields []string
	for _, f := range i.Fields {
		if len(f) == 2 {
			fields = append(fields, fmt.Sprintf("%s=%q", f[0], f[1]))
		}
	}
	s := fmt.Sprintf("submit a form (%s %s)", i.Method, cut(i.Action, 300))
	if len(fields) > 0 {
		s += " with " + strings.Join(fields, ", ")
	}
	return s
}
