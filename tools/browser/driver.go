package browser

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// driverRunOptions finds the Playwright driver and node and checks both.
// The checks matter: given a wrong folder, playwright-go creates it and
// reports only "please install the driver", and given no node it looks for
// a node binary inside the driver folder, which npm's playwright-core does
// not ship.
//
// The product finds the driver without any variable: scripts/test.sh (and
// an admin following the README) installs npm's playwright-core into
// .cache/playwright, laid out as <driver>/package/cli.js, and node is
// looked up on PATH. The variables still win when set, for other layouts.
func driverRunOptions() (*playwright.RunOptions, error) {
	dir, err := findDriver()
	if err != nil {
		return nil, err
	}
	node, err := findNode()
	if err != nil {
		return nil, err
	}
	// playwright-go reads the node binary from the environment only.
	if os.Getenv("PLAYWRIGHT_NODEJS_PATH") == "" {
		os.Setenv("PLAYWRIGHT_NODEJS_PATH", node)
	}
	return &playwright.RunOptions{
		DriverDirectory:     dir,
		SkipInstallBrowsers: true,
	}, nil
}

// driverDirEnv, when set, names the driver folder outright.
const driverDirEnv = "PLAYWRIGHT_DRIVER_PATH"

// findDriver returns the first driver folder that holds package/cli.js:
// $PLAYWRIGHT_DRIVER_PATH if set (and then only it), else
// $OUTBOUND_CACHE/playwright/driver, else .cache/playwright/driver in the
// working directory, the executable's directory, or any of their parents
// (so `go test` in a package folder finds the repository's cache).
func findDriver() (string, error) {
	if dir := os.Getenv(driverDirEnv); dir != "" {
		if err := checkDriverDir(dir); err != nil {
			return "", fmt.Errorf("browser: %s=%q has no package/cli.js (%w): its \"package\" must link to npm's playwright-core; %s", driverDirEnv, dir, err, fixHint)
		}
		return dir, nil
	}
	candidates := driverCandidates()
	for _, dir := range candidates {
		if checkDriverDir(dir) == nil {
			return dir, nil
		}
	}
	return "", &MissingError{What: "the Playwright driver (npm's playwright-core " + DriverVersion + ")", Looked: candidates,
		Fix: "run `console doctor`, which prints the commands that install it"}
}

// DriverCandidates is the search order for the driver folder after
// $PLAYWRIGHT_DRIVER_PATH: $OUTBOUND_CACHE/playwright/driver; the user's
// cache (~/.cache/outbound/playwright/driver), where `console doctor`
// tells an admin to install it; .cache/playwright/driver in the working
// directory, the executable's directory and their parents (where
// scripts/test.sh installs it); then /usr/local/lib/outbound and
// /usr/lib/outbound (a package's place).
func DriverCandidates() []string { return driverCandidates() }

// UserDriverDir is the driver folder in the user's cache, where an admin
// installs the driver by hand.
func UserDriverDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "outbound", "playwright", "driver")
}

// SystemDriverDirs are the driver folders a package would install.
var SystemDriverDirs = []string{"/usr/local/lib/outbound/playwright/driver", "/usr/lib/outbound/playwright/driver"}

func driverCandidates() []string {
	var out []string
	if cache := os.Getenv("OUTBOUND_CACHE"); cache != "" {
		out = append(out, filepath.Join(cache, "playwright", "driver"))
	}
	if dir := UserDriverDir(); dir != "" {
		out = append(out, dir)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	seen := map[string]bool{}
	for _, dir := range starts {
		for {
			c := filepath.Join(dir, ".cache", "playwright", "driver")
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return append(out, SystemDriverDirs...)
}

func checkDriverDir(dir string) error {
	_, err := os.Stat(filepath.Join(dir, "package", "cli.js"))
	return err
}

// findNode is $PLAYWRIGHT_NODEJS_PATH when set, else node on PATH.
func findNode() (string, error) {
	if node := os.Getenv("PLAYWRIGHT_NODEJS_PATH"); node != "" {
		if err := checkExecutable(node); err != nil {
			return "", fmt.Errorf("browser: PLAYWRIGHT_NODEJS_PATH=%q: %w: point it at node (Node.js 20)", node, err)
		}
		return node, nil
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return "", &MissingError{What: "node (Node.js 20), which runs the Playwright driver", Looked: []string{"PATH"},
			Fix: "install Node.js (`apt-get install nodejs npm`), or set PLAYWRIGHT_NODEJS_PATH to a node binary"}
	}
	return node, nil
}

// DriverVersion is the playwright-core version playwright-go v0.5200.1 speaks.
const DriverVersion = "1.52.0"

// MissingError says a part the browser needs is not installed, and where
// it was looked for. Tests skip on it (unless told the browser is
// required); the product reports it as the browser being unavailable.
type MissingError struct {
	What   string
	Looked []string
	Fix    string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("browser: %s is not installed (looked in %s): %s", e.What, strings.Join(e.Looked, ", "), e.Fix)
}

// Available reports why a browser cannot be launched from this
// environment, without starting anything: a *MissingError when Chromium,
// node or the driver is absent, another error when one is present but
// unusable, nil when all three are there.
func Available() error {
	if _, err := chromiumPath(""); err != nil {
		return err
	}
	_, err := driverRunOptions()
	return err
}

var errNoSuchFile = errors.New("no such file")

// checkExecutable reports why path cannot be run, or nil.
func checkExecutable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errNoSuchFile
		}
		return err
	}
	if info.IsDir() {
		return errors.New("is a directory")
	}
	if info.Mode().Perm()&0o111 == 0 {
		return errors.New("not executable")
	}
	return nil
}
