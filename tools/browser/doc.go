// Package browser starts the headless Chromium that Outbound drives, through
// playwright-go, without any download.
//
// It exists because playwright-go's defaults cannot work where Outbound runs:
// they fetch a driver and a browser from Playwright's CDN, and our machines
// reach only Debian apt, the npm registry and the Go module proxy. So the
// browser is Debian's chromium and the driver is npm's playwright-core,
// installed by scripts/test.sh in a checkout or by an admin following the
// user guide. This package finds both without any environment variable
// (DriverCandidates, ChromiumCandidates), checks them before starting
// anything, and says what is missing; Checks is what `console doctor`
// prints, with the exact fix per piece. The screenshot tool, the browser
// tools and the e2e tests share it, so all run the same browser with the
// same flags.
//
// Optional environment, for other layouts:
//
//	PLAYWRIGHT_DRIVER_PATH  folder whose "package" is npm's playwright-core
//	PLAYWRIGHT_NODEJS_PATH  the node binary that runs the driver (default: node on PATH)
//	OUTBOUND_CACHE          a cache whose playwright/driver is searched first
//	OUTBOUND_CHROMIUM       the Chromium binary (default: the first of ChromiumCandidates)
package browser
