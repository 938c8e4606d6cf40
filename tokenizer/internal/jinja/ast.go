package jinja

// Statement nodes.
type (
	stmt interface{ isStmt() }

	dataNode   struct{ text string }
	outputNode struct {
		x   expr
		pos int
	}
	ifNode struct {
		conds  []expr
		bodies [][]stmt
		els    []stmt
	}
	forNode struct {
		target assignTarget
		iter   expr
		cond   expr // loop filter ("for x in y if cond"), may be nil
		body   []stmt
		els    []stmt
		pos    int
	}
	setNode struct {
		target assignTarget
		x      expr
		pos    int
	}
	setBlockNode struct {
		target  assignTarget
		filters []*filterExpr // applied to the captured body, arg is nil
		body    []stmt
		pos     int
	}
	macroNode struct {
		m *macro
	}
	callBlockNode struct {
		call   *callExpr
		caller *macro
		pos    int
	}
	filterBlockNode struct {
		filters []*filterExpr
		body    []stmt
		pos     int
	}
	withNode struct {
		targets []assignTarget
		vals    []expr // evaluated in the enclosing scope
		body    []stmt
		pos     int
	}
	breakNode    struct{}
	continueNode struct{}
)

func (dataNode) isStmt()        {}
func (outputNode) isStmt()      {}
func (ifNode) isStmt()          {}
func (forNode) isStmt()         {}
func (setNode) isStmt()         {}
func (setBlockNode) isStmt()    {}
func (macroNode) isStmt()       {}
func (callBlockNode) isStmt()   {}
func (filterBlockNode) isStmt() {}
func (breakNode) isStmt()       {}
func (withNode) isStmt()        {}
func (continueNode) isStmt()    {}

// assignTarget is a name, a tuple of names, or an attribute of a name (ns.attr).
type assignTarget struct {
	names []string // one name, or several for tuple unpacking
	attr  string   // if set: names[0].attr = value
	tuple bool
	// nested[i], when not nil, unpacks item i further (for a, (b, c) in …)
	nested []*assignTarget
}

type macro struct {
	name     string
	params   []string
	defaults []expr // aligned to the end of params (nil entries for required)
	body     []stmt
}

// Expression nodes.
type (
	expr interface{ isExpr() }

	literal  struct{ v any }
	nameExpr struct {
		name string
		pos  int
	}
	getattrExpr struct {
		x    expr
		name string
		pos  int
	}
	getitemExpr struct {
		x, key expr
		pos    int
	}
	sliceExpr struct {
		x                 expr
		start, stop, step expr // nil when omitted
		pos               int
	}
	callExpr struct {
		fn      expr
		args    []expr
		kwNames []string
		kwVals  []expr
		star    expr // *args, may be nil
		dstar   expr // **kwargs, may be nil
		pos     int
	}
	filterExpr struct {
		x       expr // nil in filter blocks
		name    string
		args    []expr
		kwNames []string
		kwVals  []expr
		pos     int
	}
	testExpr struct {
		x      expr
		name   string
		args   []expr
		negate bool
		pos    int
	}
	unaryExpr struct {
		op  byte // '-', '+', '!'
		x   expr
		pos int
	}
	binaryExpr struct {
		op   string // + - * / // % ** ~
		l, r expr
		pos  int
	}
	// chainExpr is a + b + c + … (or a ~ b ~ …), evaluated left to right.
	chainExpr struct {
		op    string
		items []expr
		pos   []int // position of each operator (len(items)-1)
	}
	logicExpr struct {
		and  bool
		l, r expr
	}
	compareExpr struct {
		first expr
		ops   []string // == != < > <= >= in notin
		rest  []expr
		pos   int
	}
	condExpr struct {
		cond, yes, no expr // no may be nil (undefined)
	}
	listExpr  struct{ items []expr }
	tupleExpr struct{ items []expr }
	dictExpr  struct{ keys, vals []expr }
)

func (literal) isExpr()     {}
func (nameExpr) isExpr()    {}
func (getattrExpr) isExpr() {}
func (getitemExpr) isExpr() {}
func (sliceExpr) isExpr()   {}
func (callExpr) isExpr()    {}
func (filterExpr) isExpr()  {}
func (testExpr) isExpr()    {}
func (unaryExpr) isExpr()   {}
func (binaryExpr) isExpr()  {}
func (logicExpr) isExpr()   {}
func (compareExpr) isExpr() {}
func (condExpr) isExpr()    {}
func (listExpr) isExpr()    {}
func (tupleExpr) isExpr()   {}
func (dictExpr) isExpr()    {}
func (chainExpr) isExpr()   {}
