// Code generated from package metric's catalogue by `go test ./metric -run TestMetricsDocCurrent -update`. DO NOT EDIT.

package record

// Metric names: the keys of [Metrics] in metrics.json, and of every export, one per
// metric of package metric's catalogue (docs/metrics.md). The names are AIPerf's tags
// where AIPerf has the metric; the *_vllm ones follow `vllm bench serve`.
const (
	// MetricTTFT (ms, per request, AIPerf): First chunk with generated text − request sent; chunks without text (a role-only first chunk) are skipped. Streams only.
	MetricTTFT = "time_to_first_token"
	// MetricTTFO (ms, per request, AIPerf): First chunk with non-reasoning output text − request sent; equals TTFT without reasoning. Streams only.
	MetricTTFO = "time_to_first_output_token"
	// MetricTTFTC (ms, per request, perfgate): First chunk carrying a tool call (its function's name or arguments) − request sent, for requests answered with a tool call. Streams only.
	MetricTTFTC = "time_to_first_tool_call_token"
	// MetricToolCallTokens (tokens, per request, perfgate): Tokens of a request's tool-call arguments (part of OSL), for requests answered with a tool call.
	MetricToolCallTokens = "tool_call_token_count"
	// MetricTTST (ms, per request, AIPerf): Second chunk with text − the first. Streams only.
	MetricTTST = "time_to_second_token"
	// MetricRequestLatency (ms, per request, AIPerf): Last byte of the answer − request sent.
	MetricRequestLatency = "request_latency"
	// MetricITL (ms, per request, AIPerf): Per request, (request latency − TTFT) / (OSL − 1), for streamed requests with OSL ≥ 2.
	MetricITL = "inter_token_latency"
	// MetricOutputTokenThroughputPerUser (tokens/sec/user, per request, AIPerf): Per request, 1000 / ITL: output tokens per second after the first token.
	MetricOutputTokenThroughputPerUser = "output_token_throughput_per_user"
	// MetricOSL (tokens, per request, AIPerf): Output tokens of a request, reasoning included: the client tokenizer's count of the received text, or usage.completion_tokens with --use-server-token-count.
	MetricOSL = "output_sequence_length"
	// MetricOutputTokens (tokens, per request, AIPerf): Output tokens of a request without the reasoning: OSL − reasoning_token_count.
	MetricOutputTokens = "output_token_count"
	// MetricReasoningTokens (tokens, per request, AIPerf): Reasoning tokens of a request: the client tokenizer's count of reasoning_content, or usage's reasoning_tokens when OSL comes from usage.
	MetricReasoningTokens = "reasoning_token_count"
	// MetricISL (tokens, per request, AIPerf): Input tokens of a request: the client tokenizer's count, or usage.prompt_tokens with --use-server-token-count.
	MetricISL = "input_sequence_length"
	// MetricImageTokens (tokens, per request, perfgate): Prompt tokens of a request's images under the served model's rule (Qwen2-VL patches, Llama 3.2 Vision tiles: docs/multimodal.md); not in ISL, in usage.prompt_tokens. Requests with images only.
	MetricImageTokens = "image_tokens"
	// MetricAudioTokens (tokens, per request, perfgate): Prompt tokens of a request's audio clips, 25 a second of audio (docs/multimodal.md); not in ISL, in usage.prompt_tokens. Requests with audio only.
	MetricAudioTokens = "audio_tokens"
	// MetricICL (ms, per chunk gap, AIPerf): Every gap between consecutive chunks with text, pooled over the requests.
	MetricICL = "inter_chunk_latency"
	// MetricPrefillThroughputPerUser (tokens/sec/user, per request, perfgate): Per request, ISL / TTFT in tokens per second.
	MetricPrefillThroughputPerUser = "prefill_throughput_per_user"
	// MetricQueueTime (ms, per request, perfgate): Request sent − scheduled: how long an open-loop request waited for a free connection under the concurrency ceiling.
	MetricQueueTime = "client_queue_time"
	// MetricUsageOSL (tokens, per request, perfgate): The server's usage.completion_tokens, for requests whose answer carried usage.
	MetricUsageOSL = "usage_completion_tokens"
	// MetricTTFTVLLM (ms, per request, vLLM): First chunk with "choices", text or not − request sent, as `vllm bench serve` measures it. Streams only.
	MetricTTFTVLLM = "time_to_first_token_vllm"
	// MetricITLVLLM (ms, per chunk gap, vLLM): Every gap between consecutive "choices" chunks after the first, pooled over the requests (vLLM's ITL).
	MetricITLVLLM = "inter_token_latency_vllm"
	// MetricTPOTVLLM (ms, per request, vLLM): Per request, (request latency − vLLM's TTFT) / (OSL − 1) (vLLM's TPOT).
	MetricTPOTVLLM = "time_per_output_token_vllm"
	// MetricAudioDuration (sec, per request, AIPerf): Duration of the audio a request sent (audio_transcription), from the clip's headers.
	MetricAudioDuration = "audio_duration"
	// MetricRTFx (ratio, per request, AIPerf): Per request, audio_duration / request latency: seconds of audio transcribed per second of processing (audio_transcription).
	MetricRTFx = "rtfx"
	// MetricGeneratedImages (images, per request, perfgate): Images in the answer (image_generation): its data entries with a b64_json or url.
	MetricGeneratedImages = "generated_images"
	// MetricImageThroughput (images/sec, per request, AIPerf): Per request, images in the answer / request latency (image_generation).
	MetricImageThroughput = "image_throughput"
	// MetricImageLatency (ms, per request, AIPerf): Per request, request latency / images in the answer (image_generation).
	MetricImageLatency = "image_latency"
	// MetricHTTPBlocked (ms, per request, AIPerf): Start of the connection step → request sent, less DNS lookup and connecting: taking a connection from the pool and arming it (k6's http_req_blocked, HAR's blocked).
	MetricHTTPBlocked = "http_req_blocked"
	// MetricHTTPDNSLookup (ms, per request, AIPerf): Resolving the host name of a new connection; 0 for an IP address or a reused connection (k6's http_req_looking_up, HAR's dns).
	MetricHTTPDNSLookup = "http_req_dns_lookup"
	// MetricHTTPConnecting (ms, per request, AIPerf): Opening a new connection: TCP connect plus the TLS handshake, as HAR's connect and AIPerf count it; 0 on a reused connection.
	MetricHTTPConnecting = "http_req_connecting"
	// MetricHTTPTLSHandshaking (ms, per request, k6): The TLS handshake's part of http_req_connecting (k6's http_req_tls_handshaking, HAR's ssl); 0 for plain HTTP or a reused connection.
	MetricHTTPTLSHandshaking = "http_req_tls_handshaking"
	// MetricHTTPSending (ms, per request, AIPerf): Request sent → its last byte written (k6's http_req_sending, HAR's send).
	MetricHTTPSending = "http_req_sending"
	// MetricHTTPWaiting (ms, per request, AIPerf): Last request byte written → first response byte: time to first byte (k6's http_req_waiting, HAR's wait).
	MetricHTTPWaiting = "http_req_waiting"
	// MetricHTTPReceiving (ms, per request, AIPerf): First response byte → last (k6's http_req_receiving, HAR's receive): request_latency − sending − waiting.
	MetricHTTPReceiving = "http_req_receiving"
	// MetricHTTPDuration (ms, per request, AIPerf): Sending + waiting + receiving: request sent → last response byte, the same as request_latency (k6's http_req_duration).
	MetricHTTPDuration = "http_req_duration"
	// MetricHTTPConnectionOverhead (ms, per request, AIPerf): Blocked + DNS lookup + connecting: the connection's cost before the request is sent.
	MetricHTTPConnectionOverhead = "http_req_connection_overhead"
	// MetricHTTPTotal (ms, per request, AIPerf): The six phases' sum, connection overhead + request_latency: start of the connection step → last response byte.
	MetricHTTPTotal = "http_req_total"
	// MetricHTTPConnectionReused (ratio, per request, AIPerf): 1 when the request went on a kept-alive connection from the pool, else 0: the average is the reuse rate.
	MetricHTTPConnectionReused = "http_req_connection_reused"
	// MetricServerTTFT (ms, per request, perfgate): The server's time to first token, by its own clock: arrival at its engine → first output token, queue included (vLLM: queue_time_ms + time_to_first_token_ms; SGLang: prefill_finished_ts − request_received_ts; llama.cpp: prompt_ms, which has no queue).
	MetricServerTTFT = "server_ttft"
	// MetricServerQueueTime (ms, per request, perfgate): Time the request waited in the server's scheduler queue (vLLM's queue_time_ms, SGLang's queue_time).
	MetricServerQueueTime = "server_queue_time"
	// MetricServerPrefillTime (ms, per request, perfgate): Scheduled → first output token, by the server's clock: the prompt's processing (vLLM's time_to_first_token_ms, llama.cpp's prompt_ms, SGLang's TTFT − queue_time).
	MetricServerPrefillTime = "server_prefill_time"
	// MetricServerDecodeTime (ms, per request, perfgate): First output token → last, by the server's clock: generation (vLLM's generation_time_ms, llama.cpp's predicted_ms, SGLang's decode_finished_ts − prefill_finished_ts).
	MetricServerDecodeTime = "server_decode_time"
	// MetricServerRequestLatency (ms, per request, perfgate): The server's whole time on the request, arrival → last token (server TTFT + decode; SGLang's e2e_latency).
	MetricServerRequestLatency = "server_request_latency"
	// MetricServerITL (ms, per request, perfgate): The server's mean time between output tokens in the decode phase (vLLM's mean_itl_ms, llama.cpp's predicted_per_token_ms); none for a one-token answer.
	MetricServerITL = "server_inter_token_latency"
	// MetricSpecDecodeAcceptanceRate (ratio, per request, vLLM): Per request, accepted draft tokens / proposed draft tokens (vLLM's draft_acceptance_rate; llama.cpp's draft_n_accepted / draft_n; SGLang's spec_num_correct_drafts / spec_num_proposed_drafts, or their older names), for requests that drafted.
	MetricSpecDecodeAcceptanceRate = "spec_decode_acceptance_rate"
	// MetricSpecDecodeAcceptanceLength (tokens, per request, vLLM): Per request, tokens emitted per verification step, the bonus token included: 1 + accepted draft tokens / steps (vLLM's mean_acceptance_length).
	MetricSpecDecodeAcceptanceLength = "spec_decode_acceptance_length"
	// MetricClientOverhead (ms, per request, perfgate): TTFT − server_ttft − http_req_sending: the part of the client's TTFT that neither the server's clock nor the request's write accounts for (the network both ways, the server's front end before its clock starts, the client's delay in reading); streams whose server reported its TTFT (docs/measurement.md).
	MetricClientOverhead = "client_overhead"
	// MetricOutputTokenThroughput (tokens/sec, per run, AIPerf): Sum of OSL over the successful requests / benchmark duration.
	MetricOutputTokenThroughput = "output_token_throughput"
	// MetricTotalTokenThroughput (tokens/sec, per run, AIPerf): Sum of ISL and OSL over the successful requests / benchmark duration.
	MetricTotalTokenThroughput = "total_token_throughput"
	// MetricAudioThroughput (audio sec/sec, per run, perfgate): Sum of audio_duration over the successful requests / benchmark duration: the server's RTFx under the run's load; reported only when requests sent audio.
	MetricAudioThroughput = "audio_throughput"
	// MetricTotalImageThroughput (images/sec, per run, perfgate): Images received over the successful requests / benchmark duration; reported only when answers carried images.
	MetricTotalImageThroughput = "total_image_throughput"
	// MetricRequestThroughput (requests/sec, per run, AIPerf): Successful requests / benchmark duration.
	MetricRequestThroughput = "request_throughput"
	// MetricGoodput (requests/sec, per run, AIPerf): Requests meeting every bound of the goodput SLO / benchmark duration; reported only with an SLO.
	MetricGoodput = "goodput"
	// MetricRequestCount (requests, per run, AIPerf): Successful measured (non-warm-up) requests.
	MetricRequestCount = "request_count"
	// MetricGoodRequestCount (requests, per run, AIPerf): Requests meeting every bound of the goodput SLO; reported only with an SLO.
	MetricGoodRequestCount = "good_request_count"
	// MetricErrorCount (requests, per run, AIPerf): Failed measured requests.
	MetricErrorCount = "error_request_count"
	// MetricErrorRate (ratio, per run, perfgate): Failed / (failed + successful) measured requests.
	MetricErrorRate = "error_rate"
	// MetricBenchmarkDuration (sec, per run, AIPerf): First measured request sent → last one done.
	MetricBenchmarkDuration = "benchmark_duration"
	// MetricTotalISL (tokens, per run, AIPerf): Sum of ISL over the successful requests.
	MetricTotalISL = "total_isl"
	// MetricTotalOSL (tokens, per run, AIPerf): Sum of OSL (reasoning included) over the successful requests.
	MetricTotalOSL = "total_osl"
	// MetricTotalOutputTokens (tokens, per run, AIPerf): Sum of output_token_count (OSL without reasoning) over the successful requests; equals total_osl without reasoning.
	MetricTotalOutputTokens = "total_output_tokens"
	// MetricTotalReasoning (tokens, per run, AIPerf): Sum of reasoning_token_count over the successful requests.
	MetricTotalReasoning = "total_reasoning_tokens"
	// MetricPrefixCacheHitRate (ratio, per run, perfgate): Σ usage.prompt_tokens_details.cached_tokens / Σ prompt tokens over the successful measured requests that reported it; else the delta of the server's prefix-cache counters (vLLM's prefix_cache_hits/queries) over the run; unknown without either (docs/prefix-cache.md).
	MetricPrefixCacheHitRate = "prefix_cache_hit_rate"
	// MetricPrefixCacheIdealHitRate (ratio, per run, perfgate): The hit rate an ideal prefix cache (chained blocks of the run's block size; LRU of --kv-cache-blocks, else unbounded) reaches on the exact prompt token ids sent, in send order, over the measured requests (docs/prefix-cache.md).
	MetricPrefixCacheIdealHitRate = "prefix_cache_ideal_hit_rate"
	// MetricPrefixCacheGap (ratio, per run, perfgate): prefix_cache_ideal_hit_rate − prefix_cache_hit_rate: the hits the server lost beyond what an ideal cache of the stated capacity would; reported when both are known.
	MetricPrefixCacheGap = "prefix_cache_gap"
	// MetricGPUEnergy (J, per run, perfgate): Energy the scraped GPUs used over the measured window, all GPUs added: DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION interpolated at the window's ends, else DCGM_FI_DEV_POWER_USAGE integrated over it (docs/outputs.md).
	MetricGPUEnergy = "gpu_energy"
	// MetricGPUPower (W, per run, perfgate): gpu_energy / benchmark_duration: the scraped GPUs' mean power over the measured window, added up.
	MetricGPUPower = "gpu_power"
	// MetricGPUUtilization (ratio, per run, perfgate): Mean of DCGM_FI_DEV_GPU_UTIL over the measured window's scrapes and the GPUs, as a fraction.
	MetricGPUUtilization = "gpu_utilization"
	// MetricGPUMemoryUsed (MiB, per run, perfgate): Peak DCGM_FI_DEV_FB_USED of any scraped GPU over the measured window's scrapes.
	MetricGPUMemoryUsed = "gpu_memory_used"
	// MetricTokensPerJoule (tokens/J, per run, perfgate): total_osl / gpu_energy: output tokens (reasoning included) generated per joule the GPUs used over the measured window.
	MetricTokensPerJoule = "tokens_per_joule"
	// MetricOutputTPSPerGPU (tokens/sec/GPU, per run, perfgate): output_token_throughput / the number of GPUs the telemetry reported.
	MetricOutputTPSPerGPU = "output_tps_per_gpu"
	// MetricEnergyPerRequest (J/request, per run, perfgate): gpu_energy / request_count: joules per successful measured request.
	MetricEnergyPerRequest = "energy_per_request"
	// MetricJobLatencyP50 (ms, per run, perfgate): Median over agent jobs of last answer's end − the job's first request's scheduled time.
	MetricJobLatencyP50 = "job_latency_p50"
	// MetricJobLatencyP90 (ms, per run, perfgate): 90th percentile of the job latency (see job_latency_p50).
	MetricJobLatencyP90 = "job_latency_p90"
	// MetricJobLatencyP99 (ms, per run, perfgate): 99th percentile of the job latency (see job_latency_p50).
	MetricJobLatencyP99 = "job_latency_p99"
	// MetricJobTTFTP50 (ms, per run, perfgate): Median over agent jobs of the job's first token (of its first request) − the job's scheduled start.
	MetricJobTTFTP50 = "job_ttft_p50"
	// MetricJobTTFTP99 (ms, per run, perfgate): 99th percentile of the job TTFT (see job_ttft_p50).
	MetricJobTTFTP99 = "job_ttft_p99"
	// MetricJobsPerHour (jobs/hour, per run, perfgate): Agent jobs finished / benchmark duration, per hour.
	MetricJobsPerHour = "jobs_per_hour"
	// MetricJobsPerHourPerUser (jobs/hour, per run, perfgate): One hour / the mean job latency: the jobs a user running them back to back finishes per hour (jobs_per_hour over the mean number of jobs in flight).
	MetricJobsPerHourPerUser = "jobs_per_hour_per_user"
	// MetricJobGoodput (ratio, per run, perfgate): Fraction of agent jobs whose every request succeeded and met the goodput SLO. Only with an SLO.
	MetricJobGoodput = "job_goodput"
	// MetricSubagentFanout (sessions, per run, perfgate): Mean sub-agent sessions per agent job.
	MetricSubagentFanout = "subagent_fanout"
	// MetricToolWaitShare (ratio, per run, perfgate): Σ tool time the jobs' turns waited / Σ job latency.
	MetricToolWaitShare = "tool_wait_share"
)
