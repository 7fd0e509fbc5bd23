// Package browsertest drives the duroxide-redis dashboard (the ui command)
// in a headless Chromium: the pages an operator clicks through, with the
// binary built from this checkout and data made by the real runtime. It is
// a module of its own so that chromedp stays out of the library's go.mod.
package browsertest
