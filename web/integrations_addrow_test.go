package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
)

// paramRows reads the parameter rows of an integration form: name and
// description of each, in order.
func paramRows(p page) [][2]string {
	var rows [][2]string
	p.doc.Find(`[data-testid="param-row"]`).Each(func(i int, s *goquery.Selection) {
		rows = append(rows, [2]string{s.Find(`input[name^="param_name_"]`).AttrOr("value", ""), s.Find(`input[name^="param_desc_"]`).AttrOr("value", "")})
	})
	return rows
}

// TestEmptyParameterRowsLookEmpty: examples are marked as examples, each
// field has a label of its own, and blank rows are set apart.
func TestEmptyParameterRowsLookEmpty(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	p := ada.get("/integrations/http/new")
	// Enter in a field submits with the form's first submit button: it
	// must save, not add a row.
	if first := p.doc.Find(`[data-testid="integration-form"] button[type="submit"]`).First(); first.AttrOr("name", "") != "" {
		t.Errorf("the form's default button is %q (name %q): Enter would not save", first.Text(), first.AttrOr("name", ""))
	}
	rows := p.doc.Find(`[data-testid="param-row"]`)
	if rows.Length() != blankParamRows {
		t.Fatalf("%d parameter rows, want %d blank", rows.Length(), blankParamRows)
	}
	rows.Each(func(i int, s *goquery.Selection) {
		if !s.HasClass("row-blank") {
			t.Errorf("row %d is blank but not marked so", i)
		}
		s.Find(`input:not([type=checkbox]), select`).Each(func(_ int, in *goquery.Selection) {
			if ph, ok := in.Attr("placeholder"); ok && !strings.HasPrefix(ph, "e.g. ") {
				t.Errorf("placeholder %q reads like a value: an example must say so", ph)
			}
			if label := strings.TrimSpace(in.Closest("label").Find("span").First().Text()); label == "" {
				t.Errorf("%s has no label of its own", in.AttrOr("name", "?"))
			}
		})
	})
}

// TestAddAnotherParameterKeepsWhatWasTyped: the plain-form button returns
// the form as typed with one more empty row, saves nothing, and a form
// with five parameters then saves all five.
func TestAddAnotherParameterKeepsWhatWasTyped(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	svc := loopbackService(t)
	form := url.Values{
		"name": {"order_status"}, "description": {"Look up an order."}, "method": {"GET"},
		"url": {svc.URL + "/orders/{a}?b={b}&c={c}&d={d}&e={e}"}, "revision": {"0"},
		"secret_rows": {"2"}, "secret_name_0": {"Authorization"}, "secret_value_0": {"Bearer x"},
		"param_rows": {"3"}, "param_name_0": {"a"}, "param_required_0": {"yes"}, "param_desc_0": {"first"},
		"param_name_1": {"b"}, "param_type_1": {"integer"}, "param_desc_2": {"a description, no name yet"},
		"add_param": {"yes"},
	}
	p := ada.post("/integrations/http/new", form)
	if p.status != http.StatusOK {
		t.Fatalf("add row: %d\n%s", p.status, p.body)
	}
	want := [][2]string{{"a", "first"}, {"b", ""}, {"", "a description, no name yet"}, {"", ""}}
	if got := paramRows(p); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("rows after add: %q, want %q", got, want)
	}
	if v := p.doc.Find(`input[name="param_rows"]`).AttrOr("value", ""); v != "4" {
		t.Errorf("param_rows %q, want 4", v)
	}
	if _, ok := p.doc.Find(`input[name="param_name_3"]`).Attr("autofocus"); !ok {
		t.Error("the new row is not focused")
	}
	if p.doc.Find(`select[name="param_type_1"] option[selected]`).AttrOr("value", "") != "integer" || p.doc.Find(`input[name="param_required_0"][checked]`).Length() != 1 {
		t.Error("type or required of a typed row was lost")
	}
	for _, k := range []string{"name", "description", "url"} {
		if p.doc.Find(`[name="`+k+`"]`).AttrOr("value", p.doc.Find(`textarea[name="`+k+`"]`).Text()) != form.Get(k) {
			t.Errorf("%s was not kept", k)
		}
	}
	if !strings.Contains(p.doc.Find(`[data-testid="form-error"]`).Text(), "type them again") || strings.Contains(p.body, "Bearer x") {
		t.Error("a typed secret value must not come back, and the page must say so")
	}
	if p.doc.Find(".field-error").Length() != 0 {
		t.Error("adding a row showed a save's problems")
	}
	if list, _ := h.store.ListIntegrations(context.Background()); len(list) != 0 {
		t.Fatalf("adding a row saved the integration: %d", len(list))
	}

	// Five parameters, then a save.
	delete(form, "add_param")
	form.Set("param_rows", "5")
	form.Set("param_name_2", "c")
	form.Set("param_name_3", "d")
	form.Set("param_name_4", "e")
	for _, i := range []string{"0", "2", "3", "4"} {
		form.Set("param_type_"+i, "string")
	}
	if saved := ada.post("/integrations/http/new", form); saved.status != http.StatusSeeOther {
		t.Fatalf("save with five parameters: %d %s %s", saved.status, saved.doc.Find(".field-error").Text(), saved.doc.Find(".form-error").Text())
	}
	list, _ := h.store.ListIntegrations(context.Background())
	if len(list) != 1 || len(list[0].Params) != 5 {
		t.Fatalf("saved %+v, want one integration with five parameters", list)
	}

	// On a stored integration the button changes nothing stored either.
	edit := ada.get("/integrations/http/order_status")
	rev := edit.doc.Find(`input[name="revision"]`).AttrOr("value", "")
	form.Set("revision", rev)
	form.Set("add_param", "yes")
	form.Set("description", "changed but not saved")
	form.Set("param_rows", "8")
	p = ada.post("/integrations/http/order_status", form)
	if got := paramRows(p); p.status != http.StatusOK || len(got) != 9 {
		t.Fatalf("add row to a stored integration: %d, %d rows (want 5 typed, 3 blank + 1)", p.status, len(got))
	}
	if list, _ := h.store.ListIntegrations(context.Background()); list[0].Description != "Look up an order." {
		t.Errorf("adding a row saved the description %q", list[0].Description)
	}
}
