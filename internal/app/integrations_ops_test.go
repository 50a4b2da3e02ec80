package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

const opsSecret = "Bearer sk_live_APP_OPS_4412"

func orderInput(url string) IntegrationInput {
	return IntegrationInput{
		Name: "order_status", Description: "Look up an order.", Method: "GET", URL: url + "/orders/{id}",
		Headers: []HeaderInput{{Name: "Accept", Value: "application/json"}, {Name: "Authorization", Value: opsSecret, Secret: true}},
		Params:  []tools.IntegrationParam{{Name: "id", Type: tools.ParamString, Required: true}},
	}
}

func TestIntegrationOperations(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	var hits atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"auth_ok":`+map[bool]string{true: "true", false: "false"}[r.Header.Get("Authorization") == opsSecret]+`}`)
	}))
	defer svc.Close()

	saved, err := ta.CreateIntegration(ctx, SaveIntegration{Input: orderInput(svc.URL), Actor: "ada", Version: 0})
	if err != nil {
		t.Fatal(err)
	}
	sealed := saved.Row.Headers[1].Value
	if strings.Contains(sealed, "sk_live") || ta.reloads.Load() != 1 || len(ta.Integrations().List()) != 1 {
		t.Fatalf("create: sealed %q, reloads %d, in force %d", sealed, ta.reloads.Load(), len(ta.Integrations().List()))
	}
	a := ta.audits(t)
	if len(a) != 1 || a[0].Action != ActionIntegrationAdd || a[0].Target != "order_status" || !strings.Contains(a[0].After, "Authorization: (secret)") ||
		strings.Contains(a[0].After, "sk_live") || strings.Contains(a[0].After, sealed) {
		t.Fatalf("create audit: %+v", a)
	}

	refused := []struct {
		name  string
		run   func() error
		check func(t *testing.T, err error)
	}{
		{"a name taken", func() error {
			_, err := ta.CreateIntegration(ctx, SaveIntegration{Input: orderInput(svc.URL), Version: models.AnyRevision})
			return err
		}, func(t *testing.T, err error) {
			var de *DuplicateError
			if !errors.As(err, &de) || de.Name != "order_status" {
				t.Fatalf("got %v", err)
			}
		}},
		{"every field's problem with its fix", func() error {
			in := orderInput("ftp://x.example")
			in.Name, in.Description = "new", ""
			in.Headers = append(in.Headers, HeaderInput{Name: "Host", Value: "evil"})
			_, err := ta.CreateIntegration(ctx, SaveIntegration{Input: in, Version: models.AnyRevision})
			return err
		}, func(t *testing.T, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got %v", err)
			}
			for _, field := range []string{"name", "description", "url", "headers"} {
				if p, ok := ve.Field(field); !ok || p.Fix == "" {
					t.Errorf("no problem with a fix for %s: %+v", field, ve.Problems)
				}
			}
		}},
		{"a stale version", func() error {
			_, err := ta.UpdateIntegration(ctx, "order_status", SaveIntegration{Input: orderInput(svc.URL), Version: 0})
			return err
		}, func(t *testing.T, err error) {
			var ce *ConflictError
			if !errors.As(err, &ce) || ce.Current != 1 {
				t.Fatalf("got %v", err)
			}
		}},
		{"a rename needs confirming", func() error {
			in := orderInput(svc.URL)
			in.Name = "lookup_order"
			_, err := ta.UpdateIntegration(ctx, "order_status", SaveIntegration{Input: in, Version: models.AnyRevision})
			return err
		}, func(t *testing.T, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Problems[0].Code != ProblemRenameUnconfirmed || !strings.Contains(ve.Problems[0].Problem, "agents calling order_status") {
				t.Fatalf("got %v", err)
			}
		}},
		{"a kept secret does not follow the URL elsewhere", func() error {
			in := orderInput("https://collector.example.net")
			in.Headers[1] = HeaderInput{Name: "Authorization", Secret: true, Keep: "Authorization"}
			_, err := ta.UpdateIntegration(ctx, "order_status", SaveIntegration{Input: in, Version: models.AnyRevision})
			return err
		}, func(t *testing.T, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Problems[0].Code != ProblemSecretMoved || ve.Problems[0].Field != "url" {
				t.Fatalf("got %v", err)
			}
		}},
		{"updating what is not there", func() error {
			_, err := ta.UpdateIntegration(ctx, "ghost", SaveIntegration{Input: orderInput(svc.URL), Version: models.AnyRevision})
			return err
		}, func(t *testing.T, err error) {
			var nf *NotFoundError
			if !errors.As(err, &nf) || nf.Name != "ghost" {
				t.Fatalf("got %v", err)
			}
		}},
		{"deleting what is not there", func() error {
			return ta.DeleteIntegration(ctx, "ghost", "ada", models.AnyRevision)
		}, func(t *testing.T, err error) {
			if !errors.Is(err, models.ErrNotFound) {
				t.Fatalf("got %v", err)
			}
		}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			rev, n, reloads := ta.snapshot(t)
			tt.check(t, tt.run())
			ta.unchanged(t, rev, n, reloads)
		})
	}

	t.Run("test: refused until allowlisted, then answered with the secret", func(t *testing.T) {
		host := strings.TrimPrefix(svc.URL, "http://")
		res, err := ta.TestIntegration(ctx, TestIntegration{Name: "order_status", Samples: map[string]string{"id": "A-1"}, Agent: "cli:ada"})
		if err != nil || res.OK() || !strings.Contains(res.Refusal.Fix, host) || hits.Load() != 0 {
			t.Fatalf("before the entry: %+v, %v (service hit %d times)", res.Refusal, err, hits.Load())
		}
		if _, err := ta.AddEntries(ctx, AddEntries{Entries: []string{host}, Actor: "ada", Version: models.AnyRevision}); err != nil {
			t.Fatal(err)
		}
		res, err = ta.TestIntegration(ctx, TestIntegration{Name: "order_status", Samples: map[string]string{"id": "A-1"}, Agent: "cli:ada"})
		if err != nil || !res.OK() || !strings.Contains(res.Body, `"auth_ok": true`) {
			t.Fatalf("after the entry: %+v, %v", res, err)
		}
		if _, err := ta.TestIntegration(ctx, TestIntegration{Name: "ghost"}); !errors.Is(err, models.ErrNotFound) {
			t.Fatalf("testing a missing integration: %v", err)
		}
	})
	t.Run("update keeps a secret left empty, and renames once confirmed", func(t *testing.T) {
		in := orderInput(svc.URL)
		in.Name, in.Description = "lookup_order", "Changed."
		in.Headers[1] = HeaderInput{Name: "Authorization", Secret: true, Keep: "Authorization"}
		saved, err := ta.UpdateIntegration(ctx, "order_status", SaveIntegration{Input: in, Actor: "ada", Version: models.AnyRevision, ConfirmRename: true})
		if err != nil || !saved.Renamed() || saved.Row.Headers[1].Value != sealed {
			t.Fatalf("got %+v, %v", saved, err)
		}
		last := ta.audits(t)[len(ta.audits(t))-1]
		if last.Action != ActionIntegrationUpdate || last.Target != "lookup_order" || !strings.HasPrefix(last.Before, "name order_status") || strings.Contains(last.Before+last.After, sealed) {
			t.Fatalf("update audit: %+v", last)
		}
	})
	t.Run("delete", func(t *testing.T) {
		if err := ta.DeleteIntegration(ctx, "lookup_order", "ada", models.AnyRevision); err != nil {
			t.Fatal(err)
		}
		last := ta.audits(t)[len(ta.audits(t))-1]
		if last.Action != ActionIntegrationDelete || last.Target != "lookup_order" || len(ta.Integrations().List()) != 0 {
			t.Fatalf("delete: %+v, %d in force", last, len(ta.Integrations().List()))
		}
	})
}

// TestIntegrationInputIsNormalizedForEveryFrontEnd: the operation, not
// the web form or the command line, trims the text fields and capitalises
// the method, so both front ends store the same integration.
func TestIntegrationInputIsNormalizedForEveryFrontEnd(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	in := orderInput("http://orders.example.com")
	in.Name, in.Method, in.URL, in.Description = "  order_status ", " post", " http://orders.example.com/orders/{id} ", " Look up an order. "
	saved, err := ta.CreateIntegration(ctx, SaveIntegration{Input: in, Actor: "ada", Version: models.AnyRevision})
	if err != nil {
		t.Fatal(err)
	}
	row := saved.Row
	if row.Name != "order_status" || row.Method != "POST" || row.URLTemplate != "http://orders.example.com/orders/{id}" || row.Description != "Look up an order." {
		t.Fatalf("stored %q %q %q %q, want trimmed and POST", row.Name, row.Method, row.URLTemplate, row.Description)
	}
	if problems := CheckIntegration(in, nil); len(problems) != 0 {
		t.Fatalf("the live check refuses what the operation stores: %+v", problems)
	}
}
