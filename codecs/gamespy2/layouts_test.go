package gamespy2

import (
	"reflect"
	"testing"
)

func TestInferLayoutsTable(t *testing.T) {
	var want [16]layout
	for i, s := range [...]Section{7, 1, 2, 4, 3, 6, 5, 0} {
		q := SectionRequest([4]byte{}, s)
		want[2*i] = layout{server: q.Server, players: q.Players, teams: q.Teams, width: 2}
		want[2*i+1] = want[2*i].oneByte()
	}
	if !reflect.DeepEqual(inferLayouts, want) {
		t.Errorf("inferLayouts = %+v, want %+v", inferLayouts, want)
	}
}
