package durablelint_test

import (
	"testing"

	"github.com/duroxide-go/duroxide-redis/extra/durablelint"
	"golang.org/x/tools/go/analysis/analysistest"
)

// TestAnalyzer checks every rule, each way of registering an orchestration,
// the transitive helpers, and that activities and unregistered functions are
// left alone (testdata/src/orch; the durable package there is a stub of the
// registration API).
func TestAnalyzer(t *testing.T) {
	t.Parallel()
	analysistest.Run(t, analysistest.TestData(), durablelint.Analyzer, "orch")
}
