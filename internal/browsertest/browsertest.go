// Package browsertest decides whether a test that needs a real Chromium
// runs, skips or fails, the same way in every package.
//
// A developer without Chromium or the Playwright driver can still run
// `go test ./...`: those tests skip, naming what is missing and how to
// install it. The project's test command sets OUTBOUND_BROWSER_REQUIRED, so
// there a missing browser fails instead: CI cannot go green without one. A
// browser that is installed but broken always fails.
package browsertest

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/outboundhq/outbound/tools/browser"
)

// SkipEnv skips every browser test on purpose.
const SkipEnv = "OUTBOUND_E2E_SKIP"

// RequiredEnv turns a missing browser into a failure (scripts/test.sh sets it).
const RequiredEnv = "OUTBOUND_BROWSER_REQUIRED"

// Check says whether browser tests can run here: skip is a reason to skip
// them all, err a reason to fail; both empty means run.
func Check() (skip string, err error) {
	if os.Getenv(SkipEnv) != "" {
		return SkipEnv + " is set: browser tests are skipped on purpose", nil
	}
	err = browser.Available()
	var missing *browser.MissingError
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &missing) && os.Getenv(RequiredEnv) == "":
		return fmt.Sprintf("browser tests are skipped: %v (set %s=1 to make this a failure)", err, RequiredEnv), nil
	case errors.As(err, &missing):
		return "", fmt.Errorf("%w (%s is set, so a missing browser is a failure)", err, RequiredEnv)
	}
	return "", err
}

// Require skips or fails t as Check says.
func Require(t testing.TB) {
	t.Helper()
	skip, err := Check()
	if err != nil {
		t.Fatal(err)
	}
	if skip != "" {
		t.Skip(skip)
	}
}
