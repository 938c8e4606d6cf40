// Renders chat templates with @huggingface/jinja, the reference for perfgate's engine.
// stdin: {"now": ISO time, "jobs": [{"template": src, "contexts": [ctx, ...]}, ...]}
// stdout: [[{"out": text} | {"error": message}, ...], ...] (one list per job).
// Date is pinned to "now" so strftime_now is stable; run with TZ=UTC.
// With "bench": N in the request, it instead renders jobs[0].contexts[0] N times (after a
// warm-up) and writes {"ns_per_op": T}, the peer number of BenchmarkApplyChatTemplate.
const { Template } = require("@huggingface/jinja");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  const fixed = new Date(req.now).getTime();
  const RealDate = Date;
  globalThis.Date = class extends RealDate {
    constructor(...a) {
      if (a.length === 0) super(fixed);
      else super(...a);
    }
    static now() {
      return fixed;
    }
  };
  if (req.bench > 0) {
    const tpl = new Template(req.jobs[0].template);
    const ctx = req.jobs[0].contexts[0];
    for (let i = 0; i < Math.min(req.bench, 1000); i++) tpl.render(ctx);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < req.bench; i++) tpl.render(ctx);
    const ns = Number(process.hrtime.bigint() - t0) / req.bench;
    process.stdout.write(JSON.stringify({ ns_per_op: ns }));
    return;
  }
  const results = req.jobs.map((job) => {
    let tpl;
    try {
      tpl = new Template(job.template);
    } catch (e) {
      return job.contexts.map(() => ({ error: "parse: " + e.message }));
    }
    return job.contexts.map((ctx) => {
      try {
        return { out: tpl.render(ctx) };
      } catch (e) {
        return { error: String(e && e.message ? e.message : e) };
      }
    });
  });
  process.stdout.write(JSON.stringify(results));
});
