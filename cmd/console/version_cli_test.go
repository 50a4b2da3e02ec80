package main

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestVersionOf(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
		info.Settings = []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
		return info
	}
	for _, tc := range []struct {
		label, stamped string
		info           *debug.BuildInfo
		ok             bool
		want           string
	}{
		{"-ldflags wins", "1.4.0", &debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}}, true, "1.4.0"},
		{"module version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, true, "v1.4.0"},
		{"commit", "dev", vcs("0123456789abcdef0123", "false"), true, "dev-0123456789ab"},
		{"modified commit", "dev", vcs("0123456789abcdef0123", "true"), true, "dev-0123456789ab+dirty"},
		{"nothing known", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
		{"no build info", "dev", nil, false, "dev"},
	} {
		if got := versionOf(tc.stamped, tc.info, tc.ok); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.label, got, tc.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	if r := runCLI(t, "version"); r.code != 0 || r.stdout != buildVersion()+"\n" || r.stderr != "" {
		t.Fatalf("version: %+v, want %q", r, buildVersion())
	}
	if r := runCLI(t, "version", "now"); r.code != 2 || !strings.Contains(r.stderr, "version takes no arguments (now): console version") {
		t.Fatalf("an argument: %+v", r)
	}
}

// TestMCPReportsTheVersionCommandsVersion: `console mcp` tells its client
// the version `console version` prints.
func TestMCPReportsTheVersionCommandsVersion(t *testing.T) {
	db := existingDB(t)
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- run(ctx, env{serverIn, serverOut, io.Discard}, []string{"mcp", "--db", db})
	}()
	t.Cleanup(func() {
		cancel()
		serverIn.Close()
		<-done
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Version; got != buildVersion() {
		t.Fatalf("MCP server version %q, want %q", got, buildVersion())
	}
}

// TestStampedVersion builds the console with -ldflags "-X main.version=…"
// and asks the binary, on the command line and over MCP.
func TestStampedVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the console binary")
	}
	bin := filepath.Join(t.TempDir(), "console")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=1.2.3-test", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || string(out) != "1.2.3-test\n" {
		t.Fatalf("console version: %q, %v", out, err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(bin, "mcp", "--db", existingDB(t))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Version; got != "1.2.3-test" {
		t.Fatalf("MCP server version %q, want 1.2.3-test", got)
	}
}
