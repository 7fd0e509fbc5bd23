package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// EnvScreenshots names the directory TestScreenshots writes the README's
// images to; unset, the test skips:
//
//	DUROXIDE_UI_SCREENSHOTS=$PWD/docs go test -run TestScreenshots ./cmd/duroxide-redis/browsertest/
const EnvScreenshots = "DUROXIDE_UI_SCREENSHOTS"

// TestScreenshots makes a deployment look busy for a few seconds (waves of
// orders of varying size, a failure, instances waiting for approval) and
// captures the overview, the instance list, an instance's timeline and
// what a running instance waits for.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv(EnvScreenshots)
	if dir == "" {
		t.Skip("set " + EnvScreenshots + "=DIR to write the dashboard's screenshots there")
	}
	d := newDeployment(t)
	base := d.serve("--sample", "500ms")
	n := 0
	for wave := range 48 {
		var ids []string
		for range 1 + (wave*7)%5 {
			n++
			id := fmt.Sprintf("order-%d", 100+n)
			d.start("ProcessOrder", id, fmt.Sprintf(`{"sku":"A%d","qty":%d}`, n%4, 1+n%3))
			ids = append(ids, id)
		}
		for _, id := range ids {
			d.wait(id)
		}
	}
	d.finish("Reserve", "order-40", `{"sku":"Z9","qty":40}`)
	d.start("AwaitApproval", "order-41", "")
	d.finish("ProcessOrder", "order-42", `{"sku":"A1","qty":2}`)
	d.running("order-41")
	d.start("AwaitApproval", "order-43", "")
	d.running("order-43")
	if err := d.client.CancelInstance(context.Background(), "order-43", "customer called"); err != nil {
		t.Fatal(err)
	}
	d.wait("order-43")
	d.startFulfil("order-44")
	ctx := tab(t)
	shots := []struct{ file, path, ready string }{
		{"ui-overview.png", "/", "#live svg"},
		{"ui-instances.png", "/instances", "#instances"},
		{"ui-instance.png", "/instances/order-42", "#timeline"},
		{"ui-waiting.png", "/instances/order-44", "#waiting"},
	}
	for _, s := range shots {
		do(t, ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+s.path), chromedp.WaitVisible(css(s.ready)))
		png := get(t, ctx, chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(dir, s.file), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
