package gamespy1

import "github.com/querylens/querylens/codecs"

func init() {
	codecs.Register(&Codec{})
	codecs.Describe(description)
}

// description is what the generic code knows of GameSpy v1 beyond its
// codec (codecs.Description). Its masters speak TCP with a challenge.
//
// A row asks the default, \status\: Unreal Tournament's password is in
// the rules section, so no cheaper query (\info\\players\) fills it.
var description = codecs.Description{
	Name: Protocol,
	// The status reply lists every player (player_N, …).
	AllPlayers: true,
	// More of its games' usual query ports: Battlefield 1942 (23000) and
	// Medal of Honor (12300).
	Ports: []int{DefaultPort, 23000, 12300},
	// The masters' lists come over TCP after a challenge (master.go);
	// the querylens server keeps them, as the page cannot open TCP.
	Master: &codecs.MasterDescription{Options: map[string]string{"master": "true"},
		Default: DefaultMaster, Port: MasterPort, Kept: true,
		Filter: MasterOptions, NewList: newMasterList,
		Transport: codecs.TCP, ServerFirst: true, MessageLen: MasterMessageLen,
		ReplyCap: codecs.ReplyCap{Bytes: MaxMasterBytes, Datagrams: 4}},
}
