package perftest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/check"
)

// On a Result, Check is the embedded run.Outcome's: the objectives' verdicts with
// the run's context. (perftest's own Check, which reported a verdict on t, hid it.)
var _ func(*Result) []check.Verdict = (*Result).Check

// AssertVerdict reports a verdict computed elsewhere as the Assert methods report
// theirs: a breach is t.Errorf with the run's context, and the test goes on; a verdict
// that holds is logged.
func TestAssertVerdict(t *testing.T) {
	res := Load(t, "testdata/example")
	breach := check.Verdict{Check: "custom", Summary: "custom: 3 requests too slow"}
	var ok bool
	c := Capture(t, func(t testing.TB) { ok = res.AssertVerdict(t, breach) })
	if ok || !c.Failed() || c.Stopped() || !strings.HasPrefix(c.Text(), "perftest: custom: 3 requests too slow") || !strings.Contains(c.Text(), `scenario "`+res.Scenario.Name+`"`) {
		t.Errorf("AssertVerdict(breach) = %v: failed=%v stopped=%v, message\n%s\nwant false, the summary with the run's context, and the test going on", ok, c.Failed(), c.Stopped(), c.Text())
	}
	held := check.Verdict{Check: "custom", Pass: true, Summary: "custom: every request in time"}
	c = Capture(t, func(t testing.TB) { ok = res.AssertVerdict(t, held) })
	if !ok || c.Failed() {
		t.Errorf("AssertVerdict(held) = %v, failed=%v:\n%s", ok, c.Failed(), c.Text())
	}
	if got, want := len(res.Check()), len(res.Outcome.Check()); got != want || got == 0 {
		t.Errorf("res.Check() has %d verdicts, res.Outcome.Check() %d; want the same, the example's objectives", got, want)
	}
}

// No method of Result hides a method of a type it embeds (run.Outcome): one name
// on a Result means one thing.
func TestResultHidesNoMethod(t *testing.T) {
	declared := map[string]bool{} // Result's own methods, from its source
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
				continue
			}
			recv := fd.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.Name == "Result" {
				declared[fd.Name.Name] = true
			}
		}
	}
	if !declared["Assert"] {
		t.Fatalf("found none of Result's methods in the package's source (%d found)", len(declared))
	}
	rt := reflect.TypeFor[Result]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		if !f.Anonymous {
			continue
		}
		et := f.Type
		if et.Kind() != reflect.Pointer {
			et = reflect.PointerTo(et)
		}
		for j := range et.NumMethod() {
			if m := et.Method(j).Name; declared[m] {
				t.Errorf("Result.%s hides the embedded %s.%s", m, f.Type, m)
			}
		}
	}
}
