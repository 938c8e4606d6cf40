package distribution_test

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/distribution"
)

func TestParseSpec(t *testing.T) {
	s, err := distribution.ParseSpec("fixed:128")
	if err != nil || s.String() != "fixed:128" {
		t.Fatalf(`ParseSpec("fixed:128") = %v, %v; want fixed:128, nil`, s, err)
	}
	if s, err := distribution.ParseSpec(""); err != nil || !s.IsZero() {
		t.Errorf(`ParseSpec("") = %v, %v; want the zero Spec, nil`, s, err)
	}
	_, err = distribution.ParseSpec("normal:512")
	if err == nil || !strings.Contains(err.Error(), `"normal:512"`) {
		t.Errorf(`ParseSpec("normal:512") error = %v; want one quoting the text`, err)
	}
}

func TestMustSpecPanicsWithTheParseError(t *testing.T) {
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !strings.HasPrefix(err.Error(), "distribution: cannot parse \"nomal:1,2\"") {
			t.Errorf("MustSpec(\"nomal:1,2\") panicked with %v; want the parse error", r)
		}
	}()
	distribution.MustSpec("nomal:1,2")
}
