//go:build race

package tools

// raceDetector says the tests run under the race detector.
const raceDetector = true
