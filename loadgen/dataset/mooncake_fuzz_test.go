package dataset

import (
	"errors"
	"strings"
	"testing"
)

// FuzzEachMooncakeRow: any input either fails naming a line or gives rows whose
// token ids (AppendMooncakeIDs, as perfgate analyze-trace makes them) number
// input_length, with hash id h's block as h·B+i and the rest the row's own id.
func FuzzEachMooncakeRow(f *testing.F) {
	f.Add(`{"timestamp": 0, "input_length": 12, "output_length": 1, "hash_ids": [0, 1, 2]}`+"\n"+`{"input_length": 9, "hash_ids": [0, 4, 5]}`, 4)
	f.Add(`{"input_length": 3, "hash_ids": [6]}`+"\n\n"+`{"input_length": 20, "hash_ids": [6, 7, 8]}`, 4)
	f.Add(`{"input_length": 0}`, 16)
	f.Add(`{"input_length": "ten"}`, 16)
	f.Add(`{"input_length": 5, "hash_ids": [-1]}`, 2)
	f.Add("not json", 1)
	f.Fuzz(func(t *testing.T, in string, bt int) {
		bt = 1 + int(uint(bt)%64)
		index := 0
		err := EachMooncakeRow(strings.NewReader(in), func(line int, row MooncakeRow) error {
			if row.InputLength < 1 || line < 1 {
				t.Fatalf("line %d: row %+v accepted", line, row)
			}
			if row.InputLength > 1<<16 || len(row.HashIDs) > 1<<10 {
				return nil // too large to make here
			}
			ids := AppendMooncakeIDs(nil, row, bt, index)
			full := row.FullBlocks(bt)
			if len(ids) != row.InputLength || full*bt > row.InputLength || full > len(row.HashIDs) {
				t.Fatalf("row %+v, blocks of %d: %d ids, %d full blocks; want input_length ids", row, bt, len(ids), full)
			}
			for k, id := range ids {
				if b := k / bt; b < full && id != row.HashIDs[b]*bt+k%bt || b >= full && id != -(index+1) {
					t.Fatalf("row %+v, blocks of %d: id %d = %d", row, bt, k, id)
				}
			}
			index++
			return nil
		})
		var le *LineError
		if err != nil && !errors.As(err, &le) {
			t.Fatalf("error %v names no line", err)
		}
	})
}
