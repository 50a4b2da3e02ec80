package app

import (
	"errors"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/tools"
)

// Screenshots starts what take_screenshot needs besides the browser: the
// guard's embedded proxy (every page request goes through it) and the
// refusing proxy that Chromium's own background traffic is sent to. The
// browser itself starts on the first screenshot, so a console that never
// takes one never runs Chromium.
func (a *App) Screenshots() (*tools.Screenshotter, func() error, error) {
	refuse, err := tools.StartRefusingProxy()
	if err != nil {
		return nil, nil, err
	}
	proxy, err := a.guard.StartProxy(guard.EmbeddedProxyOptions{Caller: guard.Caller{Tool: tools.TakeScreenshotName}})
	if err != nil {
		refuse.Close()
		return nil, nil, err
	}
	shots := tools.NewScreenshotter(a.guard, proxy, a.Settings, tools.ChromiumLauncher(refuse.URL()))
	stop := func() error { return errors.Join(shots.Close(), proxy.Close(), refuse.Close()) }
	return shots, stop, nil
}
