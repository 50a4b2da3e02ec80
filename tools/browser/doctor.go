package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Check is one piece the browser needs, as `console doctor` shows it:
// where it was found, or why it does not work and the exact fix.
type Check struct {
	Name  string
	Found string // where the piece is, or what it is
	Err   error  // nil when the piece works
	Fix   string // the commands or steps that fix Err
	// Skipped says the check did not run because an earlier piece is
	// missing; Err says which.
	Skipped bool
}

// OK reports whether the piece works.
func (c Check) OK() bool { return c.Err == nil }

// Checks examines each piece in turn: Chromium, node, the Playwright
// driver, its version, and (when launch is set and the rest is there) a
// real launch. The launch goes through a proxy that answers nothing and
// resolves no names, so it sends no packet off the machine.
func Checks(launch bool) []Check {
	var out []Check
	chromium, err := chromiumPath("")
	out = append(out, Check{Name: "Chromium", Found: chromium, Err: err, Fix: chromiumFix(err)})

	node, err := findNode()
	c := Check{Name: "node", Found: node, Err: err, Fix: "Install Node.js 18 or later: apt-get install nodejs npm"}
	if err == nil {
		c.Found = node + nodeVersion(node)
	}
	out = append(out, c)

	driver, err := findDriver()
	out = append(out, Check{Name: "Playwright driver", Found: driver, Err: err, Fix: driverFix()})

	version := Check{Name: "driver version", Fix: driverFix()}
	if err != nil {
		version.Skipped, version.Err = true, errors.New("no driver to check")
	} else if have, verr := installedVersion(driver); verr != nil {
		version.Err = verr
	} else if have != DriverVersion {
		version.Found = have
		version.Err = fmt.Errorf("the driver is playwright-core %s; playwright-go speaks %s", have, DriverVersion)
	} else {
		version.Found = have + ", as playwright-go expects"
	}
	out = append(out, version)

	if !launch {
		return out
	}
	start := Check{Name: "launch", Fix: "Run `" + chromium + " --headless --no-sandbox --dump-dom about:blank` to see Chromium's own error; a container may need more shared memory (--shm-size=1g)."}
	for _, c := range out {
		if !c.OK() {
			start.Skipped, start.Err = true, fmt.Errorf("%s does not work yet", c.Name)
			return append(out, start)
		}
	}
	t0 := time.Now()
	start.Err = tryLaunch()
	if start.Err == nil {
		start.Found = fmt.Sprintf("Chromium started, opened a page and stopped in %s", time.Since(t0).Round(10*time.Millisecond))
	}
	return append(out, start)
}

// tryLaunch starts Chromium as the product does, opens a blank page and
// stops it. Its only proxy is a closed port and it resolves no names.
func tryLaunch() error {
	b, err := Launch(Options{Proxy: &playwright.Proxy{Server: "http://127.0.0.1:9"}, ExtraArgs: []string{BlockDNSArg()}})
	if err != nil {
		return err
	}
	defer b.Close()
	page, err := b.Chromium.NewPage()
	if err != nil {
		return fmt.Errorf("Chromium started but could not open a page: %w", err)
	}
	return page.Close()
}

func chromiumFix(err error) string {
	if err == nil {
		return ""
	}
	return "Install it: apt-get install chromium (Debian, Ubuntu). Outbound looks in " + strings.Join(ChromiumCandidates, ", ") +
		"; for another place, set OUTBOUND_CHROMIUM to the binary in the service's environment."
}

// driverFix is the commands that install the driver where Outbound looks
// for it without any variable: the user's cache.
func driverFix() string {
	dir := UserDriverDir()
	if dir == "" {
		dir = SystemDriverDirs[0]
	}
	root := filepath.Dir(dir)
	return fmt.Sprintf("Install npm's playwright-core %s as the user that runs Outbound:\n"+
		"  mkdir -p %s && cd %s\n"+
		"  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install playwright-core@%s\n"+
		"  mkdir -p driver && ln -sfn ../node_modules/playwright-core driver/package",
		DriverVersion, root, root, DriverVersion)
}

// installedVersion reads the version of the playwright-core the driver
// folder links to.
func installedVersion(driver string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(driver, "package", "package.json"))
	if err != nil {
		return "", fmt.Errorf("cannot read the driver's version: %w", err)
	}
	var pkg struct {
		Name, Version string
	}
	if err := json.Unmarshal(raw, &pkg); err != nil || pkg.Version == "" {
		return "", fmt.Errorf("%s holds no version", filepath.Join(driver, "package", "package.json"))
	}
	if pkg.Name != "" && pkg.Name != "playwright-core" {
		return "", fmt.Errorf("the driver's package is %s, not playwright-core", pkg.Name)
	}
	return pkg.Version, nil
}

// nodeVersion is " (v20.1.0)", or "" when node does not say.
func nodeVersion(node string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return ""
	}
	return " (" + strings.TrimSpace(string(out)) + ")"
}
