package browser

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/playwright-community/playwright-go"
)

// DefaultChromium is the Chromium binary that Debian's chromium package installs.
const DefaultChromium = "/usr/bin/chromium"

// ChromiumCandidates are the places Chromium is looked for, in order,
// when neither Options.ExecutablePath nor $OUTBOUND_CHROMIUM names it.
var ChromiumCandidates = []string{DefaultChromium, "/usr/lib/chromium/chromium", "/usr/bin/chromium-browser"}

// fixHint ends every setup error: the command that says what to install.
const fixHint = "run `console doctor`"

// baseArgs keep Chromium quiet: no GPU, and as little traffic of its own as
// its flags allow. They do not stop all of it; see BlockDNSArg.
var baseArgs = []string{
	"--no-sandbox",
	"--disable-gpu",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--no-first-run",
	// Chromium's own reports, experiments and checks, which it would send
	// through a page's proxy as if the page had asked (issue 9, finding 9).
	"--disable-field-trial-config",
	"--disable-client-side-phishing-detection",
	"--disable-domain-reliability",
	"--safebrowsing-disable-auto-update",
	"--disable-default-apps",
	"--disable-breakpad",
	"--metrics-recording-only",
	"--no-pings",
	"--no-service-autorun",
	// Chromium tries https:// first for an http:// address and falls back
	// on failure. Through the guard's proxy that probe is a CONNECT of its
	// own: a decision, and for a host without https a network failure in
	// the refusal log on every screenshot. The browser goes where it was
	// asked, as fetch_url does.
	//
	// The other features are Chromium's own services. A request Chromium
	// makes for a page, such as an autofill query about its form, goes
	// through that page's proxy, where it would be decided (and logged) as
	// the page's: so the services are off. Chromium keeps only the last
	// --disable-features, and Playwright passes its own list first; the
	// ones of its list that make traffic are repeated here (see
	// mergeDisabledFeatures).
	"--disable-features=" + strings.Join([]string{
		"HttpsUpgrades",
		"AutofillServerCommunication", // form queries to content-autofill.googleapis.com
		"OptimizationHints", "OptimizationHintsFetching", "OptimizationGuideModelDownloading",
		"OptimizationHintsFetchingAnonymousDataConsent", "OptimizationTargetPrediction",
		"NetworkTimeServiceQuerying", // clock checks against Google
		"Translate", "MediaRouter", "DialMediaRouteProvider",
		"CertificateTransparencyComponentUpdater",
		"InterestFeedContentSuggestions",
	}, ","),
}

// Options says how to launch Chromium. The zero value is a plain headless
// browser found from the environment.
type Options struct {
	// ExecutablePath is the Chromium binary. Empty means $OUTBOUND_CHROMIUM,
	// then DefaultChromium.
	ExecutablePath string
	// ExtraArgs are added after the base flags, for example BlockDNSArg().
	ExtraArgs []string
	// Proxy, when set, carries every request of the browser, loopback
	// included (Playwright adds Chromium's <-loopback> rule itself; do not put
	// localhost in Bypass, that undoes it). Contexts may set their own proxy
	// on top of it.
	Proxy *playwright.Proxy
}

// Browser is a running Chromium and the Playwright driver that controls it.
type Browser struct {
	// Chromium is the launched browser; open contexts and pages from it.
	Chromium playwright.Browser

	driver    *playwright.Playwright
	closeOnce sync.Once
	closeErr  error
}

// Launch checks the driver, node and Chromium, starts the driver and launches
// headless Chromium. The caller must Close the Browser.
func Launch(opts Options) (*Browser, error) {
	runOpts, err := driverRunOptions()
	if err != nil {
		return nil, err
	}
	launchOpts, err := launchOptions(opts)
	if err != nil {
		return nil, err
	}
	driver, err := playwright.Run(runOpts)
	if err != nil {
		return nil, fmt.Errorf("browser: start Playwright driver in %q: %w (%s)", runOpts.DriverDirectory, err, fixHint)
	}
	chromium, err := driver.Chromium.Launch(launchOpts)
	if err != nil {
		stopErr := driver.Stop()
		return nil, errors.Join(
			fmt.Errorf("browser: launch Chromium %q: %w", *launchOpts.ExecutablePath, err),
			stopErr,
		)
	}
	return &Browser{Chromium: chromium, driver: driver}, nil
}

// Close stops Chromium, then the driver. It is safe to call more than once;
// later calls return the first call's error.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		closeErr := b.Chromium.Close()
		if closeErr != nil {
			closeErr = fmt.Errorf("browser: close Chromium: %w", closeErr)
		}
		stopErr := b.driver.Stop()
		if stopErr != nil {
			stopErr = fmt.Errorf("browser: stop Playwright driver: %w", stopErr)
		}
		b.closeErr = errors.Join(closeErr, stopErr)
	})
	return b.closeErr
}

// launchOptions turns Options into Playwright's launch options, checking the
// Chromium binary and the proxy first so a mistake gets a plain error instead
// of a driver stack trace.
func launchOptions(opts Options) (playwright.BrowserTypeLaunchOptions, error) {
	exe, err := chromiumPath(opts.ExecutablePath)
	if err != nil {
		return playwright.BrowserTypeLaunchOptions{}, err
	}
	if opts.Proxy != nil && opts.Proxy.Server == "" {
		return playwright.BrowserTypeLaunchOptions{}, errors.New("browser: Options.Proxy has an empty Server: set it to the proxy, for example http://127.0.0.1:3128, or leave Proxy nil")
	}
	args := mergeDisabledFeatures(slices.Concat(baseArgs, opts.ExtraArgs))
	return playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(exe),
		Headless:       playwright.Bool(true),
		Args:           args,
		Proxy:          opts.Proxy,
	}, nil
}

// disableFeatures is the flag whose later copies replace earlier ones.
const disableFeatures = "--disable-features="

// mergeDisabledFeatures joins every --disable-features flag into one, in
// the place of the first: Chromium honours only the last copy, so an extra
// flag would otherwise silently undo a base one.
func mergeDisabledFeatures(args []string) []string {
	out := make([]string, 0, len(args))
	first := -1
	for _, a := range args {
		features, ok := strings.CutPrefix(a, disableFeatures)
		switch {
		case !ok:
			out = append(out, a)
		case first < 0:
			first = len(out)
			out = append(out, a)
		case features != "" && out[first] == disableFeatures:
			out[first] += features
		case features != "":
			out[first] += "," + features
		}
	}
	return out
}

// chromiumPath picks the binary (explicit, then $OUTBOUND_CHROMIUM, then
// DefaultChromium) and checks that it is an executable file.
func chromiumPath(explicit string) (string, error) {
	path, from := explicit, "Options.ExecutablePath"
	if path == "" {
		path, from = os.Getenv("OUTBOUND_CHROMIUM"), "OUTBOUND_CHROMIUM"
	}
	if path == "" {
		path, from = DefaultChromium, "the default"
		for _, c := range ChromiumCandidates {
			if checkExecutable(c) == nil {
				path = c
				break
			}
		}
	}
	if err := checkExecutable(path); err != nil {
		if errors.Is(err, errNoSuchFile) {
			looked := []string{path + " (from " + from + ")"}
			if from == "the default" {
				looked = ChromiumCandidates
			}
			return "", &MissingError{What: "Chromium", Looked: looked,
				Fix: "install it with `apt-get install chromium` or set OUTBOUND_CHROMIUM to a Chromium binary"}
		}
		return "", fmt.Errorf("browser: Chromium %q (from %s): %w: install it with `apt-get install chromium` or set OUTBOUND_CHROMIUM to a Chromium binary", path, from, err)
	}
	return path, nil
}
