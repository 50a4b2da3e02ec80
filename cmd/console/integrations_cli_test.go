package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/outboundhq/outbound/models"
)

const cliSecret = "Bearer sk_live_CLI_SECRET_5150"

// orderService is a loopback service that says whether it got the secret.
func orderService(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		auth := "false"
		if r.Header.Get("Authorization") == cliSecret {
			auth = "true"
		}
		io.WriteString(w, `{"order":"`+strings.TrimPrefix(r.URL.Path, "/orders/")+`","auth_ok":`+auth+`}`)
	}))
	t.Cleanup(svc.Close)
	return svc, &hits
}

func addOrderArgs(db, svcURL string) []string {
	return []string{"integrations", "add", "--db", db, "--name", "order_status", "--description", "Look up an order's state.",
		"--url", svcURL + "/orders/{id}", "--header", "Accept: application/json", "--secret-header", "Authorization: -",
		"--param", "id:string:required:The order number: like A-1"}
}

func storedIntegrations(t *testing.T, db string) []models.Integration {
	t.Helper()
	store, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rows, err := store.ListIntegrations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestIntegrationsAddRefusesBadInput(t *testing.T) {
	db := existingDB(t)
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"header without colon", []string{"--header", "Accept application/json"}, "", `--header "Accept application/json" has no colon; write it as 'Name: value'`},
		{"secret header without colon is not echoed", []string{"--secret-header", "sk_live_TYPED"}, "", "a --secret-header has no colon"},
		{"param without type", []string{"--param", "id"}, "", `--param "id": write it as name:type[:required]:description`},
		{"param of an unknown type", []string{"--param", "qty:text"}, "", "--param: parameter qty has an unknown type; choose string, integer, number or boolean"},
		{"bad name", []string{"--name", "Order Status"}, "", "--name: a tool name is 2 to 41 characters"},
		{"reserved name", []string{"--name", "new"}, "", "--name: the name new is kept for the page that creates integrations; choose another name"},
		{"no description", []string{"--description", ""}, "", "--description: the description is empty"},
		{"not http", []string{"--url", "ftp://example.com/{id}"}, "", "--url: "},
		{"body with GET", []string{"--body", `{"id": {id}}`}, "", "--body: a GET request has no body; choose POST, PUT or PATCH"},
		{"unknown method", []string{"--method", "fetch"}, "", "--method: not a supported method; choose one of GET"},
		{"credential in a plain header", []string{"--header", "X-Api-Key: k"}, "", "--header/--secret-header: the header X-Api-Key looks like a credential"},
		{"empty secret on stdin", nil, "\n", "read an empty value from stdin"},
		{"two secrets on stdin", []string{"--secret-header", "X-Other-Token: -"}, "s\n", "only one --secret-header can read its value from stdin"},
		{"a stray argument", []string{"order_status"}, "", "integrations add takes flags only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdin := tt.stdin
			if stdin == "" {
				stdin = cliSecret + "\n"
			}
			r := runCLIWithStdin(t, stdin, append(addOrderArgs(db, "https://api.example.com"), tt.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("got %+v, want exit 2 and %q", r, tt.want)
			}
			if strings.Contains(r.stderr, "sk_live") {
				t.Fatal("the error echoes a secret")
			}
		})
	}
	if rows := storedIntegrations(t, db); len(rows) != 0 {
		t.Fatalf("refused adds stored %d integrations", len(rows))
	}
	if got := auditActions(t, db); len(got) != 0 {
		t.Fatalf("refused adds were audited: %v", got)
	}
}

func TestIntegrationsCommands(t *testing.T) {
	db := existingDB(t)
	svc, hits := orderService(t)
	host := strings.TrimPrefix(svc.URL, "http://")

	r := runCLIWithStdin(t, cliSecret+"\n", addOrderArgs(db, svc.URL)...)
	if r.code != 0 || !strings.Contains(r.stdout, "added integration order_status") {
		t.Fatalf("add: %+v", r)
	}
	rows := storedIntegrations(t, db)
	if len(rows) != 1 || !rows[0].Headers[1].Secret || strings.Contains(rows[0].Headers[1].Value, "sk_live") ||
		rows[0].Params[0].Description != "The order number: like A-1" || !rows[0].Params[0].Required || !strings.HasPrefix(rows[0].UpdatedBy, "cli") {
		t.Fatalf("stored: %+v", rows)
	}

	t.Run("add again names the taken name", func(t *testing.T) {
		r := runCLIWithStdin(t, cliSecret+"\n", addOrderArgs(db, svc.URL)...)
		if r.code != 2 || !strings.Contains(r.stderr, "an integration named order_status already exists") {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("list", func(t *testing.T) {
		r := runCLI(t, "integrations", "list", "--db", db)
		if r.code != 0 || !strings.Contains(r.stdout, "order_status") || !strings.Contains(r.stdout, "id (string, required)") {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("list --json never prints a secret", func(t *testing.T) {
		r := runCLI(t, "integrations", "list", "--json", "--db", db)
		var out []integrationJSON
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out) != 1 || out[0].Headers[1].Value != "" || !out[0].Headers[1].Secret {
			t.Fatalf("got %v %s", err, r.stdout)
		}
		if strings.Contains(r.stdout, "sk_live") || strings.Contains(r.stdout, rows[0].Headers[1].Value) {
			t.Fatal("the secret is printed")
		}
	})
	t.Run("show", func(t *testing.T) {
		r := runCLI(t, "integrations", "show", "order_status", "--db", db)
		if r.code != 0 || !strings.Contains(r.stdout, "Authorization: (secret)") || !strings.Contains(r.stdout, "GET "+svc.URL+"/orders/{id}") || strings.Contains(r.stdout, "sk_live") {
			t.Fatalf("got %+v", r)
		}
		r = runCLI(t, "integrations", "show", "--json", "order_status", "--db", db)
		var out integrationJSON
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Name != "order_status" {
			t.Fatalf("show --json: %v %s", err, r.stdout)
		}
	})
	t.Run("show what is not there", func(t *testing.T) {
		r := runCLI(t, "integrations", "show", "ghost", "--db", db)
		if r.code != 2 || !strings.Contains(r.stderr, "there is no integration named ghost; see console integrations list") {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("test is refused until the host is allowed, exit 3 with the fix", func(t *testing.T) {
		r := runCLI(t, "integrations", "test", "order_status", "id=A-1", "--db", db)
		if r.code != 3 || !strings.Contains(r.stdout, "Fix: ") || !strings.Contains(r.stdout, host) || !strings.Contains(r.stderr, "console allow add --internal "+host) || hits.Load() != 0 {
			t.Fatalf("got %+v (service hit %d times)", r, hits.Load())
		}
	})
	t.Run("test with a required parameter missing is refused", func(t *testing.T) {
		r := runCLI(t, "integrations", "test", "order_status", "--db", db)
		if r.code != 3 || !strings.Contains(r.stdout, "bad_params") || hits.Load() != 0 {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("test answers once allowed", func(t *testing.T) {
		if r := runCLI(t, "allow", "add", host, "--db", db); r.code != 0 {
			t.Fatal(r)
		}
		r := runCLI(t, "integrations", "test", "order_status", "id=A-1", "--db", db)
		if r.code != 0 || !strings.Contains(r.stdout, `"order": "A-1"`) || !strings.Contains(r.stdout, `"auth_ok": true`) {
			t.Fatalf("got %+v", r)
		}
		if strings.Contains(r.stdout, "sk_live") {
			t.Fatal("the answer shows the secret")
		}
	})
	t.Run("test takes param=value only", func(t *testing.T) {
		for _, args := range [][]string{{"order_status", "A-1"}, {}} {
			r := runCLI(t, append([]string{"integrations", "test", "--db", db}, args...)...)
			if r.code != 2 {
				t.Fatalf("%v: got %+v", args, r)
			}
		}
		if r := runCLI(t, "integrations", "test", "ghost", "--db", db); r.code != 2 || !strings.Contains(r.stderr, "no integration named ghost") {
			t.Fatalf("ghost: %+v", r)
		}
	})
	t.Run("rm", func(t *testing.T) {
		r := runCLI(t, "integrations", "rm", "order_status", "--db", db)
		if r.code != 0 || !strings.Contains(r.stdout, "removed integration order_status") || len(storedIntegrations(t, db)) != 0 {
			t.Fatalf("got %+v", r)
		}
		if r := runCLI(t, "integrations", "rm", "order_status", "--db", db); r.code != 2 || !strings.Contains(r.stderr, "no integration named order_status") {
			t.Fatalf("rm again: %+v", r)
		}
	})
	want := []string{"integration.add order_status", "allowlist.add " + host, "integration.delete order_status"}
	if got := auditActions(t, db); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("audit %v, want %v", got, want)
	}
}

func TestIntegrationsReadCommandsRefuseAMissingDatabase(t *testing.T) {
	for name, args := range map[string][]string{
		"list": {"integrations", "list"},
		"show": {"integrations", "show", "x"},
		"rm":   {"integrations", "rm", "x"},
		"test": {"integrations", "test", "x"},
	} {
		t.Run(name, func(t *testing.T) {
			db := tempDB(t)
			r := runCLI(t, append(args, "--db", db)...)
			if r.code != 2 || !strings.Contains(r.stderr, "there is no database at "+db) {
				t.Fatalf("got %+v", r)
			}
			assertMissing(t, db)
		})
	}
}
