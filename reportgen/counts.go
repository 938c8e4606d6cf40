package reportgen

import "github.com/perfgate/perfgate/record"

// countNoun says what a distribution metric's n counts, as the report's summary table
// prints it beside the number: most metrics have one value per successful request,
// the pooled gap metrics one per gap between consecutive chunks (so their n exceeds
// the request count, and can exceed the output tokens when chunks without text count).
func countNoun(name string) string {
	switch name {
	case record.MetricICL:
		return "gaps between text chunks"
	case record.MetricITLVLLM:
		return "gaps between chunks"
	case record.MetricITL, record.MetricOutputTokenThroughputPerUser, record.MetricTPOTVLLM:
		return "requests with 2+ output tokens"
	case record.MetricTTST:
		return "requests with 2+ text chunks"
	}
	return "requests"
}
