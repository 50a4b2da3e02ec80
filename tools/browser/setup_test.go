package browser

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// fakeSetup is a driver folder, a node and a Chromium that pass the checks
// Launch makes before it starts anything. None of them can run.
type fakeSetup struct {
	driverDir, node, chromium, plainFile, dir string
}

func newFakeSetup(t *testing.T) fakeSetup {
	t.Helper()
	dir := t.TempDir()
	s := fakeSetup{
		driverDir: filepath.Join(dir, "driver"),
		node:      filepath.Join(dir, "node"),
		chromium:  filepath.Join(dir, "chromium"),
		plainFile: filepath.Join(dir, "plain"),
		dir:       dir,
	}
	writeFile(t, filepath.Join(s.driverDir, "package", "cli.js"), 0o644)
	writeFile(t, s.node, 0o755)
	writeFile(t, s.chromium, 0o755)
	writeFile(t, s.plainFile, 0o644)
	return s
}

func writeFile(t *testing.T, path string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, perm); err != nil {
		t.Fatal(err)
	}
}

// TestLaunchRejectsBrokenSetup checks that each missing or wrong piece gets
// an error naming it and its fix, before any process starts.
func TestLaunchRejectsBrokenSetup(t *testing.T) {
	fake := newFakeSetup(t)
	tests := []struct {
		name string
		env  map[string]string
		opts Options
		want []string // substrings of the error
	}{
		{
			name: "driver folder without playwright-core",
			env:  map[string]string{"PLAYWRIGHT_DRIVER_PATH": fake.dir},
			want: []string{fake.dir, "no package/cli.js", "playwright-core", "console doctor"},
		},
		{
			name: "node path unset and no node on PATH",
			env:  map[string]string{"PLAYWRIGHT_NODEJS_PATH": "", "PATH": filepath.Join(fake.dir, "driver")},
			want: []string{"node (Node.js 20)", "is not installed", "looked in PATH", "PLAYWRIGHT_NODEJS_PATH"},
		},
		{
			name: "node path missing",
			env:  map[string]string{"PLAYWRIGHT_NODEJS_PATH": filepath.Join(fake.dir, "absent")},
			want: []string{"PLAYWRIGHT_NODEJS_PATH", "absent", "no such file"},
		},
		{
			name: "node not executable",
			env:  map[string]string{"PLAYWRIGHT_NODEJS_PATH": fake.plainFile},
			want: []string{"PLAYWRIGHT_NODEJS_PATH", fake.plainFile, "not executable"},
		},
		{
			name: "chromium from env missing",
			env:  map[string]string{"OUTBOUND_CHROMIUM": filepath.Join(fake.dir, "absent")},
			want: []string{"from OUTBOUND_CHROMIUM", "Chromium is not installed", "apt-get install chromium"},
		},
		{
			name: "chromium from options is a directory",
			opts: Options{ExecutablePath: fake.dir},
			want: []string{"from Options.ExecutablePath", "is a directory", "OUTBOUND_CHROMIUM"},
		},
		{
			name: "proxy without server",
			opts: Options{Proxy: &playwright.Proxy{}},
			want: []string{"Options.Proxy has an empty Server", "leave Proxy nil"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PLAYWRIGHT_DRIVER_PATH", fake.driverDir)
			t.Setenv("PLAYWRIGHT_NODEJS_PATH", fake.node)
			t.Setenv("OUTBOUND_CHROMIUM", fake.chromium)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			b, err := Launch(tt.opts)
			if err == nil {
				b.Close()
				t.Fatal("Launch succeeded, want an error")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestLaunchOptions(t *testing.T) {
	fake := newFakeSetup(t)
	proxy := &playwright.Proxy{Server: "http://127.0.0.1:3128"}
	tests := []struct {
		name     string
		envExe   string
		opts     Options
		wantExe  string
		wantArgs []string
	}{
		{
			name:     "executable from env, base flags only",
			envExe:   fake.chromium,
			wantExe:  fake.chromium,
			wantArgs: baseArgs,
		},
		{
			name:     "explicit executable wins over env, extra flags follow base flags",
			envExe:   filepath.Join(fake.dir, "absent"),
			opts:     Options{ExecutablePath: fake.node, ExtraArgs: []string{"--lang=en", "--mute-audio"}},
			wantExe:  fake.node,
			wantArgs: append(slices.Clone(baseArgs), "--lang=en", "--mute-audio"),
		},
		{
			name:    "an extra --disable-features joins the base one instead of undoing it",
			envExe:  fake.chromium,
			opts:    Options{ExtraArgs: []string{"--disable-features=WebRtcHideLocalIpsWithMdns", "--lang=en"}},
			wantExe: fake.chromium,
			wantArgs: append(slices.DeleteFunc(slices.Clone(baseArgs), func(a string) bool { return strings.HasPrefix(a, "--disable-features=") }),
				baseArgs[slices.IndexFunc(baseArgs, func(a string) bool { return strings.HasPrefix(a, "--disable-features=") })]+",WebRtcHideLocalIpsWithMdns", "--lang=en"),
		},
		{
			name:     "proxy passes through",
			envExe:   fake.chromium,
			opts:     Options{Proxy: proxy},
			wantExe:  fake.chromium,
			wantArgs: baseArgs,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OUTBOUND_CHROMIUM", tt.envExe)
			got, err := launchOptions(tt.opts)
			if err != nil {
				t.Fatalf("launchOptions: %v", err)
			}
			if got.ExecutablePath == nil || *got.ExecutablePath != tt.wantExe {
				t.Errorf("ExecutablePath = %v, want %q", got.ExecutablePath, tt.wantExe)
			}
			if got.Headless == nil || !*got.Headless {
				t.Errorf("Headless = %v, want true", got.Headless)
			}
			if !slices.Equal(got.Args, tt.wantArgs) {
				t.Errorf("Args = %q, want %q", got.Args, tt.wantArgs)
			}
			if got.Proxy != tt.opts.Proxy {
				t.Errorf("Proxy = %v, want %v", got.Proxy, tt.opts.Proxy)
			}
		})
	}
}

func TestChromiumPathDefault(t *testing.T) {
	t.Setenv("OUTBOUND_CHROMIUM", "")
	got, err := chromiumPath("")
	if err != nil {
		// The default is checked like any other path; its error must say so.
		if !strings.Contains(err.Error(), DefaultChromium) || !strings.Contains(err.Error(), "from the default") {
			t.Fatalf("error %q does not name %s as the default", err, DefaultChromium)
		}
		return
	}
	if got != DefaultChromium {
		t.Errorf("chromiumPath(\"\") = %q, want %q", got, DefaultChromium)
	}
}

// TestDriverIsFoundWithoutVariables: the product finds the driver that
// scripts/test.sh installs (.cache/playwright/driver) from the working
// directory or any parent, or under $OUTBOUND_CACHE, with no variable set;
// where there is none, the error says what is missing, where it looked and
// how to install it, and Available reports the same before anything starts.
func TestDriverIsFoundWithoutVariables(t *testing.T) {
	fake := newFakeSetup(t)
	t.Setenv("PLAYWRIGHT_DRIVER_PATH", "")
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", fake.node)
	t.Setenv("OUTBOUND_CHROMIUM", fake.chromium)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())

	t.Run("in a parent's .cache", func(t *testing.T) {
		repo := t.TempDir()
		driver := filepath.Join(repo, ".cache", "playwright", "driver")
		writeFile(t, filepath.Join(driver, "package", "cli.js"), 0o644)
		deep := filepath.Join(repo, "tools", "browser")
		if err := os.MkdirAll(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Chdir(deep)
		t.Setenv("OUTBOUND_CACHE", "")
		got, err := findDriver()
		if err != nil || got != driver {
			t.Fatalf("findDriver() = %q, %v; want %q", got, err, driver)
		}
		if err := Available(); err != nil {
			t.Fatalf("Available() = %v, want nil", err)
		}
	})
	t.Run("under OUTBOUND_CACHE", func(t *testing.T) {
		cache := t.TempDir()
		driver := filepath.Join(cache, "playwright", "driver")
		writeFile(t, filepath.Join(driver, "package", "cli.js"), 0o644)
		t.Chdir(t.TempDir())
		t.Setenv("OUTBOUND_CACHE", cache)
		if got, err := findDriver(); err != nil || got != driver {
			t.Fatalf("findDriver() = %q, %v; want %q", got, err, driver)
		}
	})
	t.Run("in the user's cache", func(t *testing.T) {
		cache := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", cache)
		t.Setenv("OUTBOUND_CACHE", "")
		t.Chdir(t.TempDir())
		driver := filepath.Join(cache, "outbound", "playwright", "driver")
		writeFile(t, filepath.Join(driver, "package", "cli.js"), 0o644)
		if got, err := findDriver(); err != nil || got != driver || UserDriverDir() != driver {
			t.Fatalf("findDriver() = %q, %v; want %q", got, err, driver)
		}
	})
	t.Run("nowhere", func(t *testing.T) {
		empty := t.TempDir()
		t.Chdir(empty)
		t.Setenv("OUTBOUND_CACHE", "")
		err := Available()
		var missing *MissingError
		if !errors.As(err, &missing) {
			t.Fatalf("Available() = %v, want a *MissingError", err)
		}
		for _, want := range []string{"playwright-core " + DriverVersion, filepath.Join(empty, ".cache", "playwright", "driver"), "console doctor"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
	})
	t.Run("chromium missing", func(t *testing.T) {
		t.Setenv("OUTBOUND_CHROMIUM", filepath.Join(fake.dir, "absent"))
		var missing *MissingError
		if err := Available(); !errors.As(err, &missing) || !strings.Contains(err.Error(), "apt-get install chromium") {
			t.Fatalf("Available() = %v, want a *MissingError naming apt-get install chromium", err)
		}
	})
}
