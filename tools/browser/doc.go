// Package browser starts the headless Chromium that Outbound drives, through
// playwright-go, without any download.
//
// It exists because playwright-go's defaults cannot work where Outbound runs:
// they fetch a driver and a browser from Playwright's CDN, and our machines
// reach only Debian apt, the npm registry and the Go module proxy. So the
// browser is Debian's chromium and the driver is npm's playwright-core,
// installed by scripts/test.sh. This package finds both from the environment,
// checks them before starting anything, and says exactly what to install when
// one is missing. The screenshot tool and the e2e tests share it, so both run
// the same browser with the same flags.
//
// Environment:
//
//	PLAYWRIGHT_DRIVER_PATH  folder whose "package" is npm's playwright-core (required)
//	PLAYWRIGHT_NODEJS_PATH  the node binary that runs the driver (required)
//	OUTBOUND_CHROMIUM       the Chromium binary (default /usr/bin/chromium)
package browser
