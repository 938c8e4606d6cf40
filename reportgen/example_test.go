package reportgen_test

import (
	"os"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
)

func ExampleWriteTable() {
	m := record.Metrics{
		Stats: map[string]record.Stat{
			record.MetricTTFT: {Unit: "ms", Count: 100, Avg: 21.5, Min: 18.2, Max: 40.1, P50: 20.9, P90: 24.3, P99: 38.7, Std: 3.1},
			record.MetricITL:  {Unit: "ms", Count: 100, Avg: 5.02, Min: 4.9, Max: 5.6, P50: 5.0, P90: 5.1, P99: 5.5, Std: 0.08},
		},
		Scalars: map[string]record.Scalar{
			record.MetricRequestThroughput: {Unit: "requests/sec", Value: 12.5},
			record.MetricRequestCount:      {Unit: "requests", Value: 100},
		},
	}
	reportgen.WriteTable(os.Stdout, m, reportgen.TableOptions{ASCII: true})
	// Output:
	//                                 perfgate | LLM Metrics
	// +===================================+=======+=======+=======+=======+=======+=======+======+
	// | Metric                            |   avg |   min |   max |   p99 |   p90 |   p50 |  std |
	// +===================================+=======+=======+=======+=======+=======+=======+======+
	// | Time to First Token (ms)          | 21.50 | 18.20 | 40.10 | 38.70 | 24.30 | 20.90 | 3.10 |
	// | Inter Token Latency (ms)          |  5.02 |  4.90 |  5.60 |  5.50 |  5.10 |  5.00 | 0.08 |
	// | Request Throughput (requests/sec) | 12.50 |   N/A |   N/A |   N/A |   N/A |   N/A |  N/A |
	// | Request Count (requests)          |   100 |   N/A |   N/A |   N/A |   N/A |   N/A |  N/A |
	// +-----------------------------------+-------+-------+-------+-------+-------+-------+------+
}
