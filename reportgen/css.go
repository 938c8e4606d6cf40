package reportgen

// PageCSS returns the style sheet every perfgate HTML report inlines, for reports
// drawn outside this package (perfgate history report) to look like the others.
func PageCSS() string { return pageCSS }
