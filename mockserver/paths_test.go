package mockserver

import "github.com/perfgate/perfgate/internal/openai"

// Short names for the paths the tests send to (the facts are in internal/openai).
const (
	pathChat        = openai.PathChat
	pathCompletions = openai.PathCompletions
	pathMessages    = openai.PathMessages
)

// The kinds the tests name.
var (
	kindChat       kind = chatKind{}
	kindCompletion kind = completionKind{}
)
