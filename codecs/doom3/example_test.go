package doom3_test

import (
	"encoding/hex"
	"fmt"

	"github.com/querylens/querylens/codecs/doom3"
)

func ExampleAppendRequest() {
	// qstat asks with a challenge of zero; querylens sends its challenge
	// twice, so that ETQW, which reads a task id first, echoes it too.
	q, _ := doom3.AppendRequest(nil, doom3.Request{Challenge: 7, Second: 7, HasSecond: true})
	fmt.Println(hex.EncodeToString(q))
	// Output:
	// ffff676574496e666f000700000007000000
}

func ExampleDecodeResponse() {
	b, _ := hex.DecodeString("ffff696e666f526573706f6e73650007000000290001007369" +
		"5f6e616d65004172656e610073695f757365506173730030000000" +
		"012800803e00004d6172696e65002001000000")
	r, err := doom3.DecodeResponse(b, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	pass, _ := r.Var("si_usepass") // keys are read without case
	fmt.Println(r.Game, r.Version(), pass, len(r.Players), r.Players[0].Name, r.Players[0].Ping)
	// Output:
	// doom3 1.41 0 1 Marine 40
}

func ExampleDecodeGame() {
	// A Quake 4 record carries a clan tag after the name.
	b, _ := hex.DecodeString("ffff696e666f526573706f6e736500000000005500020000" +
		"00012800803e00004d6172696e65005b515d002001000000")
	r, err := doom3.DecodeGame(b, doom3.GameQuake4)
	fmt.Println(r.Players[0].Name, r.Players[0].Clan, err)
	// Output:
	// Marine [Q] <nil>
}
