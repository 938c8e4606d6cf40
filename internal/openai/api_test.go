package openai

import "testing"

func TestKindOfPath(t *testing.T) {
	for path, want := range map[string]string{
		PathChat: KindChat, "/proxy/v1/chat/completions": KindChat, PathCompletions: KindCompletions,
		PathEmbeddings: KindEmbeddings, PathRanking: KindRankings, PathRerank: KindRerank, "/v2/rerank": KindRerank,
		PathResponses: KindResponses, PathMessages: KindMessages, PathModels: "", "/v1/unknown": "", "": "",
	} {
		if got := KindOfPath(path); got != want {
			t.Errorf("KindOfPath(%q) = %q, want %q", path, got, want)
		}
	}
}
