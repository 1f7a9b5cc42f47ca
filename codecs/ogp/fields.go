package ogp

import (
	"unsafe"

	"github.com/querylens/querylens/codecs"
)

// The optional fields, one table entry each, read by the decoder, the
// encoder and the view alike: the flag that selects the field, its name
// (the span path and the JSON key, and the flag's name in bit arrays), its
// wire form in each version, and where its value lives. Fields follow one
// another in the order of their flags in both versions, so a table lists
// them in that order (TestFieldTables checks it).

// form is how one field is laid out on the wire in one version, and which
// Go type holds it.
type form uint8

const (
	absent   form = iota // the version has no such field
	fStr                 // SzString, into []byte
	fColors              // StringColorInfo after the name it colours, into Colors; only when Requests has ReqColoredNames
	fU8                  // UINT8, into uint32
	fU8Int               // UINT8, into int32
	fU16                 // UINT16, into uint16 (shown as int)
	fU32                 // UINT32, into uint32
	fS16                 // SINT16, into int32
	fS32                 // SINT32, into int32
	fVarUint             // VarUINT in the version's form, into uint32
	fVarSint             // 1.0x VarSINT, into int32
	fBits                // VarBitArray, into Bits, its flags named by field.names
	fMD5                 // 16 bytes, into [16]byte
	fAddress             // 1.0x VarUINT length and that many bytes, into []byte

	// Server info only.
	fServerFlags // 1.0x ServerFlags VarBitArray, into Bits, shown by meaning
	// The next ones are made of several fields: the whole ServerInfo.
	fMod        // 1.0x SzString ModName; when not empty, VarBitArray ModFields and modFields
	fMod004     // v0.04 SzString ModName, SzString ModDir
	fMap        // 1.0x VarBitArray MapFields, SzString MapName, mapFields
	fNextMap    // 1.0x, only with the map: SzString NextMapName, mapFields under the map's MapFields
	fMap004     // v0.04 SzString MapName, SzString MapFile
	fNextMap004 // v0.04 SzString NextMapName, SzString NextMapFile
	formCount
)

// minSize is the smallest encoding of each list-entry form, for bounding
// list counts.
var minSize = [formCount]uint8{fStr: 1, fColors: 1, fU8: 1, fU8Int: 1, fU16: 2, fU32: 4, fS16: 2, fS32: 4,
	fVarUint: 1, fVarSint: 1, fBits: 1, fMD5: 16, fAddress: 1}

// forms is a field's form in 1.0x and in v0.04.
type forms [2]form

// field is one optional field of a struct (Team, Player, AddOn,
// ServerInfo, MapInfo: one table each).
//
// Where the value lives is its offset in the struct: a closure returning a
// pointer to it would make every decoded or encoded Response escape to the
// heap (the compiler cannot see through the call), costing DecodeResponse
// and AppendResponse an allocation each; and the tables are plain data,
// with no generic instance per struct to grow the browser module.
// TestFieldTables checks every offset against the struct of its table and
// the Go type its forms write.
type field struct {
	bit    Bits // the flag selecting it: the entry's fields array, or 1.0x ServerInfoFields
	bit004 Bits // server info only: the v0.04 Requests flag selecting it
	name   string
	form   forms
	names  *bitNames // fBits: the names of the value's flags
	off    uintptr   // offset of the value in the struct (whole: the struct itself)
}

// whole is the offset of a field made of several: the whole struct.
const whole = 0

// at is the value of f in the struct at x.
func (f *field) at(x unsafe.Pointer) unsafe.Pointer { return unsafe.Add(x, f.off) }

// formIn returns f's form in version v, absent when sel (the bit array
// that selects fields) does not select it or when it is a colour info and
// names are not coloured.
func (f *field) formIn(v Version, sel Bits, colored bool) form {
	bit, fm := f.bit, f.form[0]
	if v != V1 {
		fm = f.form[1]
		if f.bit004 != 0 {
			bit = f.bit004
		}
	}
	if sel&bit == 0 || fm == fColors && !colored {
		return absent
	}
	return fm
}

// teamFields are the TeamFields.
var teamFields = [...]field{
	{TeamName, 0, "name", forms{fStr, fStr}, nil, unsafe.Offsetof(Team{}.Name)},
	{TeamName, 0, "name_colors", forms{fColors, absent}, nil, unsafe.Offsetof(Team{}.NameColors)},
	{TeamScore, 0, "score", forms{fVarSint, fS32}, nil, unsafe.Offsetof(Team{}.Score)},
	{TeamAveragePing, 0, "average_ping", forms{fU16, fU16}, nil, unsafe.Offsetof(Team{}.AveragePing)},
	{TeamAverageLoss, 0, "average_loss", forms{fU16, fU16}, nil, unsafe.Offsetof(Team{}.AverageLoss)},
	{TeamPlayerCount, 0, "player_count", forms{fVarUint, fU8}, nil, unsafe.Offsetof(Team{}.PlayerCount)},
	{TeamColor, 0, "color", forms{fU16, absent}, nil, unsafe.Offsetof(Team{}.Color)},
}

// playerFields are the PlayerFields.
var playerFields = [...]field{
	{PlayerFlags, 0, "flags", forms{fBits, fBits}, &playerFlagNamesTab, unsafe.Offsetof(Player{}.Flags)},
	{PlayerSlot, 0, "slot", forms{fVarUint, fU8}, nil, unsafe.Offsetof(Player{}.Slot)},
	{PlayerName, 0, "name", forms{fStr, fStr}, nil, unsafe.Offsetof(Player{}.Name)},
	{PlayerName, 0, "name_colors", forms{fColors, absent}, nil, unsafe.Offsetof(Player{}.NameColors)},
	{PlayerTeam, 0, "team", forms{fVarSint, fU8Int}, nil, unsafe.Offsetof(Player{}.Team)},
	{PlayerClass, 0, "class", forms{fStr, fStr}, nil, unsafe.Offsetof(Player{}.Class)},
	{PlayerRace, 0, "race", forms{fStr, fStr}, nil, unsafe.Offsetof(Player{}.Race)},
	{PlayerScore, 0, "score", forms{fVarSint, fS32}, nil, unsafe.Offsetof(Player{}.Score)},
	{PlayerFrags, 0, "frags", forms{fVarSint, fS16}, nil, unsafe.Offsetof(Player{}.Frags)},
	{PlayerKills, 0, "kills", forms{fVarUint, fVarUint}, nil, unsafe.Offsetof(Player{}.Kills)},
	{PlayerDeath, 0, "deaths", forms{fVarUint, fVarUint}, nil, unsafe.Offsetof(Player{}.Deaths)},
	{PlayerSuicides, 0, "suicides", forms{fVarUint, fVarUint}, nil, unsafe.Offsetof(Player{}.Suicides)},
	{PlayerTeamKills, 0, "team_kills", forms{fVarUint, fVarUint}, nil, unsafe.Offsetof(Player{}.TeamKills)},
	{PlayerID, 0, "id", forms{fU32, fU32}, nil, unsafe.Offsetof(Player{}.ID)},
	{PlayerGlobalID, 0, "global_id", forms{fStr, fStr}, nil, unsafe.Offsetof(Player{}.GlobalID)},
	{PlayerPing, 0, "ping", forms{fU16, fU16}, nil, unsafe.Offsetof(Player{}.Ping)},
	{PlayerLoss, 0, "loss", forms{fU16, fU16}, nil, unsafe.Offsetof(Player{}.Loss)},
	{PlayerModel, 0, "model", forms{fStr, fStr}, nil, unsafe.Offsetof(Player{}.Model)},
	{PlayerTime, 0, "time", forms{fU16, fU16}, nil, unsafe.Offsetof(Player{}.Time)},
	{PlayerAddress, 0, "address", forms{fAddress, absent}, nil, unsafe.Offsetof(Player{}.Address)},
}

// addOnFields are the AddOnFields.
var addOnFields = [...]field{
	{AddOnFlags, 0, "flags", forms{fBits, fBits}, &addOnFlagNamesTab, unsafe.Offsetof(AddOn{}.Flags)},
	{AddOnShortName, 0, "short_name", forms{fStr, fStr}, nil, unsafe.Offsetof(AddOn{}.ShortName)},
	{AddOnLongName, 0, "long_name", forms{fStr, fStr}, nil, unsafe.Offsetof(AddOn{}.LongName)},
	{AddOnVersion, 0, "version", forms{fStr, fStr}, nil, unsafe.Offsetof(AddOn{}.Version)},
}

// infoFields are the server fields: 1.0x ServerInfoFields, and the v0.04
// Requests flags that select the same fields (v0.04 sends them after the
// lists, in the order of those flags; the JSON shows them in this order).
var infoFields = [...]field{
	{InfoGameName, Req004GameName, "game_name", forms{fStr, fStr}, nil, unsafe.Offsetof(ServerInfo{}.GameName)},
	{InfoServerFlags, Req004ServerFlags, "server_flags", forms{fServerFlags, fBits}, &serverFlagNames004Tab, unsafe.Offsetof(ServerInfo{}.Flags)},
	{InfoHostName, Req004HostName, "host_name", forms{fStr, fStr}, nil, unsafe.Offsetof(ServerInfo{}.HostName)},
	{InfoHostName, 0, "host_name_colors", forms{fColors, absent}, nil, unsafe.Offsetof(ServerInfo{}.HostNameColors)},
	{InfoConnectPort, 0, "connect_port", forms{fU16, absent}, nil, unsafe.Offsetof(ServerInfo{}.ConnectPort)},
	{InfoMod, Req004Mod, "mod", forms{fMod, fMod004}, nil, whole},
	{InfoGameType, Req004GameType, "game_type", forms{fStr, fStr}, nil, unsafe.Offsetof(ServerInfo{}.GameType)},
	{InfoGameMode, 0, "game_mode", forms{fStr, absent}, nil, unsafe.Offsetof(ServerInfo{}.GameMode)},
	{InfoMap, Req004Map, "map", forms{fMap, fMap004}, nil, whole},
	{InfoNextMap, Req004NextMap, "next_map", forms{fNextMap, fNextMap004}, nil, whole},
	{InfoPlayerCount, Req004PlayerCount, "player_count", forms{fVarUint, fVarUint}, nil, unsafe.Offsetof(ServerInfo{}.PlayerCount)},
	{InfoSlotMax, Req004SlotMax, "slot_max", forms{fVarUint, fVarUint}, nil, unsafe.Offsetof(ServerInfo{}.SlotMax)},
	{InfoBotCount, Req004BotCount, "bot_count", forms{fVarUint, fVarUint}, nil, unsafe.Offsetof(ServerInfo{}.BotCount)},
	{InfoReservedSlots, Req004ReservedSlots, "reserved_slots", forms{fVarUint, fVarUint}, nil, unsafe.Offsetof(ServerInfo{}.ReservedSlots)},
}

// modFields are the 1.0x ModFields.
var modFields = [...]field{
	{ModIdentifier, 0, "identifier", forms{fStr, absent}, nil, unsafe.Offsetof(ServerInfo{}.ModIdentifier)},
	{ModSize, 0, "size", forms{fU32, absent}, nil, unsafe.Offsetof(ServerInfo{}.ModSize)},
	{ModVersion, 0, "version", forms{fStr, absent}, nil, unsafe.Offsetof(ServerInfo{}.ModVersion)},
	{ModURL, 0, "url", forms{fStr, absent}, nil, unsafe.Offsetof(ServerInfo{}.ModURL)},
	{ModAuthor, 0, "author", forms{fStr, absent}, nil, unsafe.Offsetof(ServerInfo{}.ModAuthor)},
}

// mapFields are the 1.0x MapFields, after the map's name.
var mapFields = [...]field{
	{MapFileName, 0, "file_name", forms{fStr, absent}, nil, unsafe.Offsetof(MapInfo{}.File)},
	{MapFileSize, 0, "file_size", forms{fU32, absent}, nil, unsafe.Offsetof(MapInfo{}.FileSize)},
	{MapFileMD5, 0, "file_md5", forms{fMD5, absent}, nil, unsafe.Offsetof(MapInfo{}.FileMD5)},
	{MapVersion, 0, "version", forms{fStr, absent}, nil, unsafe.Offsetof(MapInfo{}.Version)},
	{MapURL, 0, "url", forms{fStr, absent}, nil, unsafe.Offsetof(MapInfo{}.URL)},
	{MapAuthor, 0, "author", forms{fStr, absent}, nil, unsafe.Offsetof(MapInfo{}.Author)},
}

// The bit arrays' flag names, from the tables (a colour info shares its
// name's flag).
var (
	infoNames      = namesOf(infoFields[:], V1)
	modNames       = namesOf(modFields[:], V1)
	mapNames       = namesOf(mapFields[:], V1)
	teamNames1     = namesOf(teamFields[:], V1)
	teamNames004   = namesOf(teamFields[:], V004)
	playerNames1   = namesOf(playerFields[:], V1)
	playerNames004 = namesOf(playerFields[:], V004)
	addOnNames     = namesOf(addOnFields[:], V1)
)

// namesOf is the flag names of table's fields in version v.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func namesOf(table []field, v Version) *bitNames {
	t := &bitNames{}
	for i := range table {
		f := &table[i]
		if fm := f.form[min(int(v), 1)]; fm != absent && fm != fColors {
			t.pairs = append(t.pairs, bitName{f.bit, f.name})
		}
	}
	return t
}

// info004Order is infoFields' indices in v0.04 wire order: by Requests flag.
var info004Order = func() []uint8 {
	var order []uint8
	for b := range 64 {
		for i := range infoFields {
			if infoFields[i].bit004 == 1<<b {
				order = append(order, uint8(i))
			}
		}
	}
	return order
}()

// entrySize is the smallest entry that sel selects from table.
func entrySize(table []field, sel Bits, v Version, colored bool) int {
	n := 0
	for i := range table {
		n += int(minSize[table[i].formIn(v, sel, colored)])
	}
	return n
}

// decodeFields reads the fields that sel selects into the struct at x, in
// table order. sel is the fields' own bit array (not v0.04's Requests,
// whose server fields go by bit004 and in another order: see answer004).
func decodeFields(d *decoder, x unsafe.Pointer, table []field, sel Bits, colored bool) {
	vi := min(int(d.v), 1)
	for i := range table {
		f := &table[i]
		if fm := f.form[vi]; sel&f.bit != 0 && fm != absent && (fm != fColors || colored) {
			d.value(fm, f.name, f.names, f.at(x))
		}
	}
}

// value reads one field of form fm into p.
func (d *decoder) value(fm form, name string, names *bitNames, p unsafe.Pointer) {
	r := d.r
	switch fm {
	case fStr:
		*(*[]byte)(p) = d.str(name)
	case fColors:
		*(*Colors)(p) = d.colors(name)
	case fU8:
		*(*uint32)(p) = uint32(r.U8(name))
	case fU8Int:
		*(*int32)(p) = int32(r.U8(name))
	case fU16:
		*(*uint16)(p) = r.U16LE(name)
	case fU32:
		*(*uint32)(p) = r.U32LE(name)
	case fS16:
		*(*int32)(p) = int32(r.S16LE(name))
	case fS32:
		*(*int32)(p) = r.S32LE(name)
	case fVarUint:
		*(*uint32)(p) = d.varuint(name)
	case fVarSint:
		*(*int32)(p) = d.varsint(name)
	case fBits:
		*(*Bits)(p) = d.bits(name, names)
	case fServerFlags:
		*(*Bits)(p) = d.bitsAs(name, appendServerFlags1)
	case fMD5:
		copy((*[16]byte)(p)[:], r.Bytes(name, 16))
	case fAddress:
		n := d.varuint("address_length") // the one field of this form
		if uint64(n) > uint64(r.Len()) {
			r.Fail(name, codecs.ErrShort)
		} else {
			*(*[]byte)(p) = r.Bytes(name, int(n))
		}
	default:
		d.serverValue(fm, name, (*ServerInfo)(p))
	}
}

// serverValue reads a server info field made of several.
func (d *decoder) serverValue(fm form, name string, s *ServerInfo) {
	if fm == fNextMap && s.Fields&InfoMap == 0 {
		return // 1.0x sends the next map only with the map
	}
	d.enter(name, -1)
	switch fm {
	case fMod:
		s.ModName = d.str("name")
		if len(s.ModName) > 0 {
			s.ModFields = d.layoutBits("fields", modNames)
			decodeFields(d, unsafe.Pointer(s), modFields[:], s.ModFields, false)
		}
	case fMod004:
		s.ModName = d.str("name")
		s.ModDir = d.str("dir")
	case fMap:
		s.MapFields = d.layoutBits("fields", mapNames)
		s.Map.Name = d.str("name")
		decodeFields(d, unsafe.Pointer(&s.Map), mapFields[:], s.MapFields, false)
	case fNextMap:
		s.NextMap.Name = d.str("name")
		decodeFields(d, unsafe.Pointer(&s.NextMap), mapFields[:], s.MapFields, false)
	case fMap004:
		s.Map.Name = d.str("name")
		s.Map.File = d.str("file")
	case fNextMap004:
		s.NextMap.Name = d.str("name")
		s.NextMap.File = d.str("file")
	}
	d.leave()
}

// encodeFields writes the fields that sel selects from the struct at x, in
// table order.
func encodeFields(e *encoder, x unsafe.Pointer, table []field, sel Bits, colored bool) {
	vi := min(int(e.v), 1)
	for i := range table {
		f := &table[i]
		if fm := f.form[vi]; sel&f.bit != 0 && fm != absent && (fm != fColors || colored) {
			e.value(fm, f.name, f.at(x))
		}
	}
}

// value writes one field of form fm from p.
func (e *encoder) value(fm form, name string, p unsafe.Pointer) {
	switch fm {
	case fStr:
		e.str(name, *(*[]byte)(p))
	case fColors:
		e.colors(name, *(*Colors)(p))
	case fU8:
		e.u8(name, int64(*(*uint32)(p)))
	case fU8Int:
		e.u8(name, int64(*(*int32)(p)))
	case fU16:
		e.u16(*(*uint16)(p))
	case fU32:
		e.u32(*(*uint32)(p))
	case fS16:
		x := *(*int32)(p)
		if x < -0x8000 || x > 0x7fff {
			e.fail(name, codecs.Detail(codecs.ErrBadValue, "does not fit in 16 bits"))
		}
		e.u16(uint16(int16(x)))
	case fS32:
		e.u32(uint32(*(*int32)(p)))
	case fVarUint:
		e.varuint(*(*uint32)(p))
	case fVarSint:
		e.varsint(*(*int32)(p))
	case fBits, fServerFlags:
		e.bits(*(*Bits)(p))
	case fMD5:
		e.b = append(e.b, (*[16]byte)(p)[:]...)
	case fAddress:
		b := *(*[]byte)(p)
		e.varuint(uint32(len(b)))
		e.b = append(e.b, b...)
	default:
		e.serverValue(fm, name, (*ServerInfo)(p))
	}
}

// serverValue writes a server info field made of several.
func (e *encoder) serverValue(fm form, name string, s *ServerInfo) {
	if fm == fNextMap && s.Fields&InfoMap == 0 {
		return
	}
	e.obj = name
	switch fm {
	case fMod:
		e.str("name", s.ModName)
		if len(s.ModName) > 0 {
			e.bits(s.ModFields)
			encodeFields(e, unsafe.Pointer(s), modFields[:], s.ModFields, false)
		}
	case fMod004:
		e.str("name", s.ModName)
		e.str("dir", s.ModDir)
	case fMap:
		e.bits(s.MapFields)
		e.str("name", s.Map.Name)
		encodeFields(e, unsafe.Pointer(&s.Map), mapFields[:], s.MapFields, false)
	case fNextMap:
		e.str("name", s.NextMap.Name)
		encodeFields(e, unsafe.Pointer(&s.NextMap), mapFields[:], s.MapFields, false)
	case fMap004:
		e.str("name", s.Map.Name)
		e.str("file", s.Map.File)
	case fNextMap004:
		e.str("name", s.NextMap.Name)
		e.str("file", s.NextMap.File)
	}
	e.obj = ""
}

// viewFields adds the fields that sel selects of the struct at x to o, in
// table order. sel is the fields' own bit array (for a v0.04 server, the
// 1.0x flags of the fields its Requests select: see serverFields).
func viewFields(w *view, o *object, x unsafe.Pointer, table []field, sel Bits, colored bool) {
	vi := min(int(w.v), 1)
	for i := range table {
		f := &table[i]
		if fm := f.form[vi]; sel&f.bit != 0 && fm != absent && (fm != fColors || colored) {
			w.value(o, fm, f.name, f.names, f.at(x))
		}
	}
}

// value adds one field of form fm from p to o.
func (w *view) value(o *object, fm form, name string, names *bitNames, p unsafe.Pointer) {
	switch fm {
	case fStr:
		o.text(name, *(*[]byte)(p))
	case fColors:
		// The colour info's span is its size; its entries follow.
		size := name + ".size"
		if w.seen == nil {
			size = ""
		}
		o.addAs(size, name, codecs.Hex(*(*Colors)(p)))
	case fU16:
		o.add(name, int(*(*uint16)(p)))
	case fU8, fU32, fVarUint:
		o.add(name, *(*uint32)(p))
	case fU8Int, fS16, fS32, fVarSint:
		o.add(name, *(*int32)(p))
	case fBits:
		o.add(name, names.list(*(*Bits)(p)))
	case fMD5:
		o.add(name, codecs.Hex((*[16]byte)(p)[:]))
	case fAddress:
		o.add(name, codecs.Hex(*(*[]byte)(p)))
	case fServerFlags:
		o.add(name, w.serverFlags(V1, *(*Bits)(p)))
	default:
		w.serverValue(o, fm, name, (*ServerInfo)(p))
	}
}

// serverValue adds a server info field made of several to o, when it has
// something to show.
func (w *view) serverValue(o *object, fm form, name string, s *ServerInfo) {
	var m codecs.Object
	switch fm {
	case fMod, fMod004:
		m = w.mod(s, fm == fMod)
	case fMap:
		m = w.mapInfo("server_info.map.", &s.Map, s.MapFields, true, true)
	case fNextMap:
		if s.Fields&InfoMap != 0 {
			m = w.mapInfo("server_info.next_map.", &s.NextMap, s.MapFields, true, false)
		}
	case fMap004:
		m = w.mapInfo("server_info.map.", &s.Map, 0, false, false)
	case fNextMap004:
		m = w.mapInfo("server_info.next_map.", &s.NextMap, 0, false, false)
	}
	if len(m) > 0 {
		o.put(name, m)
	}
}
