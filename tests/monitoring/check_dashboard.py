#!/usr/bin/env python3
"""check_dashboard.py DASHBOARD.json SCRAPE.prom: checks the Grafana dashboard against a scrape.

- the datasource is a variable: a `datasource` template variable of type prometheus, and every
  panel and target names ${datasource} (no hard-coded datasource uid);
- every PromQL expression (targets and the variables' label_values queries) parses, with a
  PromQL syntax checker written for this test (a recursive-descent parser of the grammar in
  Prometheus' docs/querying/basics.md and operators.md: selectors, matchers, ranges,
  subqueries, offset/@, functions, aggregations with by/without and parameters, binary
  operators with precedence, bool, on/ignoring, group_left/group_right);
- every metric an expression uses is a family in the scrape (a "# TYPE name" line), and every
  label it matches on or groups by is a label of that family's samples (or instance/job,
  which Prometheus adds);
- rate(), irate(), increase() and resets() take counter families only (a gauge's rate reads
  its resets as falls).
`--self-test` runs the parser on expressions that must parse and ones that must not.
"""
import json
import re
import sys

FUNCTIONS = {
    "abs", "absent", "absent_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min",
    "day_of_month", "day_of_week", "day_of_year", "days_in_month", "delta", "deriv", "exp", "floor",
    "histogram_quantile", "holt_winters", "hour", "idelta", "increase", "irate", "label_join",
    "label_replace", "ln", "log2", "log10", "minute", "month", "predict_linear", "rate", "resets",
    "round", "scalar", "sgn", "sort", "sort_desc", "sqrt", "time", "timestamp", "vector", "year",
    "avg_over_time", "min_over_time", "max_over_time", "sum_over_time", "count_over_time",
    "quantile_over_time", "stddev_over_time", "stdvar_over_time", "last_over_time",
    "present_over_time", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "sin",
    "sinh", "tan", "tanh", "deg", "rad", "pi",
}
# Functions whose argument must be a range vector (an expression ending in [d] or a subquery).
RANGE_FUNCTIONS = {"changes", "delta", "deriv", "holt_winters", "idelta", "increase", "irate",
                   "predict_linear", "rate", "resets", "absent_over_time", "present_over_time"} | \
    {f for f in FUNCTIONS if f.endswith("_over_time")}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                "bottomk", "topk", "quantile"}
PARAM_AGGREGATIONS = {"count_values", "bottomk", "topk", "quantile"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
            "and", "or", "unless", "atan2"}
BINARY_LEVELS = [["or"], ["and", "unless"], ["==", "!=", "<=", "<", ">=", ">"], ["+", "-"],
                 ["*", "/", "%", "atan2"], ["^"]]
COMPARISONS = {"==", "!=", "<=", "<", ">=", ">"}
# Functions meant for counters only (Prometheus' docs/querying/functions.md).
COUNTER_FUNCTIONS = {"rate", "irate", "increase", "resets"}

TOKEN = re.compile(r"""
  (?P<ws>\s+)
 |(?P<duration>(?:\d+(?:ms|s|m|h|d|w|y))+(?![A-Za-z0-9_]))
 |(?P<number>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[Ii]nf|[Nn]a[Nn])
 |(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)
 |(?P<ident>[A-Za-z_][A-Za-z0-9_:]*)
 |(?P<op>=~|!~|==|!=|<=|>=|[-+*/%^<>=(){}\[\],:@])
""", re.X)


class ParseError(Exception):
    pass


def tokenize(text):
    out, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise ParseError("unexpected character %r at %d" % (text[pos], pos))
        pos = m.end()
        kind = m.lastgroup
        if kind != "ws":
            out.append((kind, m.group(kind)))
    out.append(("eof", ""))
    return out


class Parser:
    """Parses one expression; records (metric, labels) of each selector in self.selectors."""

    def __init__(self, text):
        self.toks = tokenize(text)
        self.i = 0
        self.selectors = []  # (metric name or None, [label names matched], [label names grouped])
        self.counted = set()  # indices of selectors inside a COUNTER_FUNCTIONS call

    def peek(self, k=0):
        return self.toks[self.i + k]

    def take(self, value=None, kind=None):
        t = self.toks[self.i]
        if (value is not None and t[1] != value) or (kind is not None and t[0] != kind):
            want = value if value is not None else kind
            raise ParseError("expected %s, found %r" % (want, t[1] or "end of expression"))
        self.i += 1
        return t

    def at(self, value):
        return self.peek()[1] == value and self.peek()[0] in ("op", "ident")

    def parse(self):
        kind = self.expr(0)
        if self.peek()[0] != "eof":
            raise ParseError("unexpected %r after the expression" % self.peek()[1])
        return kind

    # Returns the expression's type: "vector", "range", "scalar" or "string".
    def expr(self, level):
        if level == len(BINARY_LEVELS):
            return self.unary()
        left = self.expr(level + 1)
        while self.peek()[1] in BINARY_LEVELS[level] and self.peek()[0] in ("op", "ident"):
            op = self.take()[1]
            if self.at("bool"):
                if op not in COMPARISONS:
                    raise ParseError("bool only after a comparison, not %r" % op)
                self.take()
            if self.at("on") or self.at("ignoring"):
                self.take()
                self.label_list()
                if self.at("group_left") or self.at("group_right"):
                    self.take()
                    if self.at("("):
                        self.label_list()
            # ^ is right-associative
            right = self.expr(level if op == "^" else level + 1)
            for side in (left, right):
                if side in ("range", "string"):
                    raise ParseError("binary %r on a %s" % (op, side))
            if op in ("and", "or", "unless") and "scalar" in (left, right):
                raise ParseError("%r needs vectors on both sides" % op)
            left = "vector" if "vector" in (left, right) else "scalar"
        return left

    def unary(self):
        if self.at("-") or self.at("+"):
            self.take()
            t = self.unary()
            if t in ("range", "string"):
                raise ParseError("unary minus on a %s" % t)
            return t
        return self.postfix()

    def postfix(self):
        t = self.primary()
        while True:
            if self.at("["):
                self.take("[")
                self.take(kind="duration")
                if self.at(":"):
                    self.take(":")
                    if self.peek()[0] == "duration":
                        self.take()
                    if t != "vector":
                        raise ParseError("a subquery needs an instant vector")
                elif t != "vector" or not self.last_was_selector:
                    raise ParseError("a range [d] only follows a series selector")
                self.take("]")
                t = "range"
            elif self.at("offset"):
                self.take()
                if self.at("-"):
                    self.take()
                self.take(kind="duration")
            elif self.at("@"):
                self.take()
                if self.peek()[0] == "number":
                    self.take()
                elif self.peek()[1] in ("start", "end"):
                    self.take()
                    self.take("(")
                    self.take(")")
                else:
                    raise ParseError("@ needs a timestamp, start() or end()")
            else:
                return t
            self.last_was_selector = False

    def primary(self):
        self.last_was_selector = False
        kind, val = self.peek()
        if kind == "number":
            self.take()
            return "scalar"
        if kind == "string":
            self.take()
            return "string"
        if kind == "duration":
            raise ParseError("a duration %r outside [ ]" % val)
        if val == "(" and kind == "op":
            self.take("(")
            t = self.expr(0)
            self.take(")")
            return t
        if val == "{" and kind == "op":
            labels = self.matchers()
            if not labels:
                raise ParseError("a selector needs a metric name or a matcher")
            self.selectors.append((None, labels, []))
            self.last_was_selector = True
            return "vector"
        if kind != "ident":
            raise ParseError("unexpected %r" % (val or "end of expression"))
        if val in AGGREGATIONS:
            return self.aggregation()
        if self.peek(1)[1] == "(" and self.peek(1)[0] == "op":
            return self.call()
        if val in KEYWORDS:
            raise ParseError("keyword %r where an expression belongs" % val)
        self.take()
        labels = self.matchers() if self.at("{") else []
        self.selectors.append((val, labels, []))
        self.last_was_selector = True
        return "vector"

    def call(self):
        name = self.take(kind="ident")[1]
        if name not in FUNCTIONS:
            raise ParseError("unknown function %r" % name)
        self.take("(")
        first = len(self.selectors)
        args = []
        if not self.at(")"):
            args.append(self.expr(0))
            while self.at(","):
                self.take(",")
                args.append(self.expr(0))
        self.take(")")
        if name in COUNTER_FUNCTIONS:
            self.counted.update(range(first, len(self.selectors)))
        if name in RANGE_FUNCTIONS and (not args or args[0] != "range"):
            raise ParseError("%s() needs a range vector, e.g. %s(x[5m])" % (name, name))
        if name not in RANGE_FUNCTIONS and "range" in args:
            raise ParseError("%s() does not take a range vector" % name)
        return "scalar" if name in ("time", "scalar", "pi") else "vector"

    def aggregation(self):
        name = self.take(kind="ident")[1]
        grouping = []
        if self.at("by") or self.at("without"):
            self.take()
            grouping = self.label_list()
        self.take("(")
        if name in PARAM_AGGREGATIONS:
            self.expr(0)
            self.take(",")
        first = len(self.selectors)
        t = self.expr(0)
        if t != "vector":
            raise ParseError("%s() needs an instant vector" % name)
        self.take(")")
        if self.at("by") or self.at("without"):
            if grouping:
                raise ParseError("by/without given twice")
            self.take()
            grouping = self.label_list()
        for k in range(first, len(self.selectors)):
            m, l, g = self.selectors[k]
            self.selectors[k] = (m, l, g + grouping)
        return "vector"

    def label_list(self):
        self.take("(")
        names = []
        while not self.at(")"):
            names.append(self.take(kind="ident")[1])
            if not self.at(","):
                break
            self.take(",")
        self.take(")")
        return names

    def matchers(self):
        self.take("{")
        names = []
        while not self.at("}"):
            names.append(self.take(kind="ident")[1])
            op = self.take(kind="op")[1]
            if op not in ("=", "!=", "=~", "!~"):
                raise ParseError("bad label matcher operator %r" % op)
            self.take(kind="string")
            if not self.at(","):
                break
            self.take(",")
        self.take("}")
        return names


# Grafana's interval macros become a duration; template variables stay inside strings.
def substitute(expr):
    return re.sub(r"\$(?:__rate_interval|__interval|__range|\{__rate_interval\}|\{__interval\}|\{__range\})",
                  "5m", expr)


def parse(expr):
    """The selectors: (metric, matched labels, grouped labels, inside a COUNTER_FUNCTIONS call)."""
    p = Parser(substitute(expr))
    p.parse()
    return [s + (i in p.counted,) for i, s in enumerate(p.selectors)]


def load_scrape(path):
    families, labels = {}, {}  # name -> type, name -> label names
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("# TYPE "):
            families[line.split()[2]] = line.split()[3] if len(line.split()) > 3 else ""
        elif line and not line.startswith("#"):
            m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s", line)
            if m:
                names = re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="', m.group(3) or "")
                labels.setdefault(m.group(1), set()).update(names)
    return families, labels


def self_test():
    good = ["up", 'sum by (a) (rate(x{b="c",d=~"e.*"}[5m]))', "rate(x[1h30m]) / ignoring(op) group_left y",
            "x offset 5m", "-x ^ 2 ^ 3", "topk(3, x)", "sum(x) by (a)", "x > bool 1",
            "max_over_time(rate(x[5m])[1h:1m])", 'label_replace(x, "a", "$1", "b", "(.*)")',
            "changes(x[1h])", "1 + 2", "x{}", "x and on (a) y", "histogram_quantile(0.9, sum by (le) (rate(x[5m])))"]
    bad = ["sum(rate(x[5m])", "rate(x[5q])", "x{a=b}", "foo(x)", "rate(x)", "x[5m] + 1",
           "sum by a (x)", "x +", "x{a=\"b\"", "(x", "abs(x[5m])", "1 and x", "x bool == 1",
           "x y", "sum()", "offset 5m", "{}"]
    fails = 0
    for e in good:
        try:
            parse(e)
        except ParseError as err:
            print("self-test: FAIL: %r should parse: %s" % (e, err))
            fails += 1
    for e in bad:
        try:
            parse(e)
            print("self-test: FAIL: %r should not parse" % e)
            fails += 1
        except ParseError:
            pass
    counted = [(m, c) for m, _, _, c in parse("sum(rate(a[5m])) / b + increase(c[1h]) - changes(d[1h])")]
    if counted != [("a", True), ("b", False), ("c", True), ("d", False)]:
        print("self-test: FAIL: counter functions' selectors: %r" % counted)
        fails += 1
    print("self-test: %d good and %d bad expressions, %d wrong" % (len(good), len(bad), fails))
    return fails


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return 1 if self_test() else 0
    if len(argv) != 3:
        print(__doc__)
        return 2
    dash = json.load(open(argv[1], encoding="utf-8"))
    families, labels = load_scrape(argv[2])
    if not families:
        print("FAIL: %s has no metric families" % argv[2])
        return 1
    fails = []
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        fails.append("no `datasource` template variable of type datasource / prometheus")
    exprs = []  # (where, expr)
    for v in variables.values():
        if v.get("type") == "query":
            q = v.get("query")
            q = q.get("query") if isinstance(q, dict) else q
            m = re.fullmatch(r"\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*", q or "")
            if not m:
                fails.append("variable %s: query %r is not label_values(SELECTOR, LABEL)" % (v["name"], q))
            else:
                exprs.append(("variable " + v["name"], m.group(1)))
            if (v.get("datasource") or {}).get("uid") != "${datasource}":
                fails.append("variable %s does not use ${datasource}" % v["name"])
    npanels = 0
    for p in dash.get("panels", []):
        if p.get("type") == "row":
            continue
        npanels += 1
        title = p.get("title", "?")
        if (p.get("datasource") or {}).get("uid") != "${datasource}":
            fails.append("panel %r: datasource is not ${datasource}" % title)
        if not p.get("targets"):
            fails.append("panel %r has no queries" % title)
        for t in p.get("targets", []):
            if (t.get("datasource") or {}).get("uid") != "${datasource}":
                fails.append("panel %r target %s: datasource is not ${datasource}" % (title, t.get("refId")))
            exprs.append(("panel %r %s" % (title, t.get("refId")), t.get("expr", "")))
    used = set()
    for where, e in exprs:
        try:
            sels = parse(e)
        except ParseError as err:
            fails.append("%s: does not parse: %s: %s" % (where, err, e))
            continue
        for metric, matched, grouped, counted in sels:
            if metric is None:
                fails.append("%s: a selector without a metric name" % where)
                continue
            used.add(metric)
            if metric not in families:
                fails.append("%s: metric %s is not in the scrape" % (where, metric))
                continue
            if counted and families[metric] != "counter":
                fails.append("%s: rate/increase of %s, a %s, not a counter" % (where, metric, families[metric]))
            for label in set(matched) | set(grouped):
                if label not in ("instance", "job") and label not in labels.get(metric, set()):
                    fails.append("%s: %s has no label %r in the scrape" % (where, metric, label))
    for f in fails:
        print("FAIL: " + f)
    print("%s: %d panels, %d expressions, %d metrics used (%s), all in %s: %s"
          % (argv[1], npanels, len(exprs), len(used), " ".join(sorted(used)), argv[2],
             "no" if fails else "yes"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
