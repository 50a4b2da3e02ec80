package models

import (
	"errors"
	"reflect"
	"testing"
)

func sampleIntegration(name string) Integration {
	return Integration{
		Name: name, Description: "Look up an order.", Method: "GET",
		URLTemplate: "https://api.example.com/orders/{order_id}",
		Headers:     []IntegrationHeader{{Name: "Accept", Value: "application/json"}, {Name: "Authorization", Value: "v1:sealed", Secret: true}},
		Params:      []IntegrationParam{{Name: "order_id", Type: "string", Required: true, Description: "The order number."}},
		UpdatedBy:   "ada",
	}
}

func TestIntegrationLifecycle(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		rev := mustRevision(t, s)

		rev1, err := s.CreateIntegration(ctx, rev, sampleIntegration("lookup_order"))
		if err != nil || rev1 != rev+1 {
			t.Fatalf("create: rev %d, %v; want %d", rev1, err, rev+1)
		}
		got, err := s.IntegrationByName(ctx, "lookup_order")
		if err != nil {
			t.Fatal(err)
		}
		want := sampleIntegration("lookup_order")
		if !reflect.DeepEqual(got.Headers, want.Headers) || !reflect.DeepEqual(got.Params, want.Params) || got.URLTemplate != want.URLTemplate {
			t.Fatalf("round trip: got %+v, want %+v", got, want)
		}

		t.Run("stale revision is a conflict", func(t *testing.T) {
			_, err := s.CreateIntegration(ctx, rev, sampleIntegration("other"))
			if !errors.Is(err, ErrConflict) {
				t.Fatalf("got %v, want ErrConflict", err)
			}
			if _, err := s.IntegrationByName(ctx, "other"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("a conflicting create must not be stored: %v", err)
			}
		})
		t.Run("duplicate name", func(t *testing.T) {
			_, err := s.CreateIntegration(ctx, AnyRevision, sampleIntegration("lookup_order"))
			var de *DuplicateError
			if !errors.As(err, &de) || de.Value != "lookup_order" {
				t.Fatalf("got %v, want a DuplicateError naming lookup_order", err)
			}
		})
		t.Run("update renames and keeps the row", func(t *testing.T) {
			in := sampleIntegration("find_order")
			in.Method = "POST"
			if _, err := s.UpdateIntegration(ctx, AnyRevision, "lookup_order", in); err != nil {
				t.Fatal(err)
			}
			got, err := s.IntegrationByName(ctx, "find_order")
			if err != nil || got.Method != "POST" || got.CreatedAt.IsZero() {
				t.Fatalf("renamed: %+v, %v", got, err)
			}
			if _, err := s.IntegrationByName(ctx, "lookup_order"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("old name still found: %v", err)
			}
		})
		t.Run("update of a missing one", func(t *testing.T) {
			_, err := s.UpdateIntegration(ctx, AnyRevision, "nope", sampleIntegration("nope"))
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("got %v, want ErrNotFound", err)
			}
		})
		t.Run("delete bumps the revision", func(t *testing.T) {
			before := mustRevision(t, s)
			if _, err := s.DeleteIntegration(ctx, before, "find_order"); err != nil {
				t.Fatal(err)
			}
			if after := mustRevision(t, s); after != before+1 {
				t.Fatalf("revision %d after delete, want %d", after, before+1)
			}
			list, err := s.ListIntegrations(ctx)
			if err != nil || len(list) != 0 {
				t.Fatalf("list after delete: %+v, %v", list, err)
			}
			if _, err := s.DeleteIntegration(ctx, AnyRevision, "find_order"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("second delete: %v, want ErrNotFound", err)
			}
		})
	})
}
