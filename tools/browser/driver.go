package browser

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/playwright-community/playwright-go"
)

// driverRunOptions finds the Playwright driver and node from the environment
// and checks both. The checks matter: given a wrong folder, playwright-go
// creates it and reports only "please install the driver", and given no
// PLAYWRIGHT_NODEJS_PATH it looks for a node binary inside the driver folder,
// which npm's playwright-core does not ship.
func driverRunOptions() (*playwright.RunOptions, error) {
	dir := os.Getenv("PLAYWRIGHT_DRIVER_PATH")
	if dir == "" {
		return nil, fmt.Errorf("browser: PLAYWRIGHT_DRIVER_PATH is not set: %s", fixHint)
	}
	cli := filepath.Join(dir, "package", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return nil, fmt.Errorf("browser: PLAYWRIGHT_DRIVER_PATH=%q has no package/cli.js (%w): its \"package\" must link to npm's playwright-core; %s", dir, err, fixHint)
	}
	node := os.Getenv("PLAYWRIGHT_NODEJS_PATH")
	if node == "" {
		return nil, errors.New("browser: PLAYWRIGHT_NODEJS_PATH is not set: export PLAYWRIGHT_NODEJS_PATH=\"$(command -v node)\", or " + fixHint)
	}
	if err := checkExecutable(node); err != nil {
		return nil, fmt.Errorf("browser: PLAYWRIGHT_NODEJS_PATH=%q: %w: point it at node (Node.js 20)", node, err)
	}
	return &playwright.RunOptions{
		DriverDirectory:     dir,
		SkipInstallBrowsers: true,
	}, nil
}

// checkExecutable reports why path cannot be run, or nil.
func checkExecutable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errors.New("no such file")
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
