"""Renders chat templates with Python jinja2, set up as transformers' apply_chat_template
sets it up: an ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks, the
loopcontrols extension, a {% generation %} block, and the globals/filters transformers adds
(raise_exception, strftime_now, tojson as json.dumps). Same protocol as oracle.js:
stdin {"now": ISO time, "jobs": [{"template", "contexts"}]}, stdout [[{"out"}|{"error"}]].
With "bench": N it renders jobs[0].contexts[0] N times and writes {"ns_per_op": T}.
"""
import json
import sys
import time
from datetime import datetime

from jinja2 import nodes
from jinja2.exceptions import TemplateError
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class Generation(Extension):
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def main():
    req = json.load(sys.stdin)
    now = datetime.fromisoformat(req["now"].replace("Z", "+00:00"))

    def raise_exception(message):
        raise TemplateError(message)

    def strftime_now(fmt):
        return now.strftime(fmt)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    if req.get("bench", 0) > 0:
        n = req["bench"]
        tpl = env.from_string(req["jobs"][0]["template"])
        ctx = req["jobs"][0]["contexts"][0]
        for _ in range(min(n, 1000)):
            tpl.render(**ctx)
        t0 = time.perf_counter_ns()
        for _ in range(n):
            tpl.render(**ctx)
        json.dump({"ns_per_op": (time.perf_counter_ns() - t0) / n}, sys.stdout)
        return
    results = []
    for job in req["jobs"]:
        try:
            tpl = env.from_string(job["template"])
        except Exception as e:  # noqa: BLE001
            results.append([{"error": "parse: " + str(e)} for _ in job["contexts"]])
            continue
        out = []
        for ctx in job["contexts"]:
            try:
                out.append({"out": tpl.render(**ctx)})
            except Exception as e:  # noqa: BLE001
                out.append({"error": type(e).__name__ + ": " + str(e)})
        results.append(out)
    json.dump(results, sys.stdout, ensure_ascii=False)


main()
