package guard_test

import (
	"context"
	"fmt"

	"github.com/outboundhq/outbound/guard"
)

// A help-desk agent is handed URLs by whoever writes the ticket. The guard
// decides each one before anything is fetched; the refusal tells the
// agent what happened and the admin what to change.
func Example() {
	var entries []guard.Entry
	for _, text := range []string{"status.example.com", "10.20.0.7:8080"} {
		e, err := guard.ParseEntry(text)
		if err != nil {
			fmt.Println(err)
			return
		}
		entries = append(entries, e)
	}
	policy, err := guard.NewPolicy(entries, guard.DefaultSettings())
	if err != nil {
		fmt.Println(err)
		return
	}
	g := guard.New(guard.Options{Policy: policy})
	defer g.Close()

	for _, url := range []string{
		"http://169.254.169.254/latest/meta-data/iam/",
		"http://10.20.0.7:8080/health",
		"http://10.20.0.7/health",
	} {
		d := g.Decide(context.Background(), url)
		if d.Allowed {
			fmt.Printf("allowed %s by %s\n", url, d.Entry)
			continue
		}
		fmt.Printf("refused %s: %s/%s\n  %s\n  fix: %s\n", url, d.Code, d.Reason, d.Message, d.Fix)
	}
	// Output:
	// refused http://169.254.169.254/latest/meta-data/iam/: forbidden/metadata
	//   169.254.169.254 is a cloud metadata endpoint (AWS, GCP, Azure, OpenStack), which hands out credentials and is always refused.
	//   fix: Only adding the literal IP entry 169.254.169.254 to the allowlist unlocks it; you almost certainly do not want that.
	// allowed http://10.20.0.7:8080/health by 10.20.0.7:8080
	// refused http://10.20.0.7/health: forbidden/port
	//   10.20.0.7 is allowed, but not on port 80.
	//   fix: Add 10.20.0.7 to the allowlist to allow that port.
}

// With an empty allowlist (PUBLIC WEB) any public host is reachable, and
// internal targets are refused by name or by address.
func ExampleGuard_Decide() {
	g := guard.New(guard.Options{})
	defer g.Close()
	for _, url := range []string{"http://localhost:6379/", "http://0x7f000001/", "http://[::ffff:10.0.0.1]/"} {
		d := g.Decide(context.Background(), url)
		fmt.Printf("%s: %s/%s\n", url, d.Code, d.Reason)
	}
	// Output:
	// http://localhost:6379/: forbidden/internal_name
	// http://0x7f000001/: invalid/numeric_host
	// http://[::ffff:10.0.0.1]/: forbidden/internal_address
}

// Every request the guard enforces is one Record, allowed or refused, for
// a log line and a metric. A refused request sends nothing.
func ExampleRecorder() {
	rec := guard.RecorderFunc(func(r guard.Record) {
		if r.Allowed() {
			fmt.Printf("allowed %s\n", r.URL)
			return
		}
		fmt.Printf("%s refused %s: %s/%s (%s)\n", r.Caller.Tool, r.URL, r.Refusal.Code, r.Refusal.Reason, r.Refusal.KindOf())
	})
	g := guard.New(guard.Options{Recorder: rec})
	defer g.Close()
	ctx := guard.WithCaller(context.Background(), guard.Caller{Tool: "helpdesk"})
	if _, err := g.Get(ctx, "http://192.168.1.1/admin"); err != nil {
		ref, _ := guard.AsRefusal(err)
		fmt.Println("the caller gets the same refusal:", ref.Reason)
	}
	// Output:
	// helpdesk refused http://192.168.1.1/admin: forbidden/internal_address (policy)
	// the caller gets the same refusal: internal_address
}
