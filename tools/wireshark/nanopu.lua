-- nanopu.lua: a Wireshark/tshark dissector for the nanoPU transport header, as nanopu
-- writes it in its captures (`nanopu run --pcap`). The layout is crates/net/src/wire/
-- transport.rs: 30 bytes after IPv4, big-endian, IP protocol 0x99 (NDP) or 0x98 (Homa);
-- DATA packets carry one payload segment, trimmed and control packets 8 bytes of padding.
--
-- Use: wireshark -X lua_script:tools/wireshark/nanopu.lua capture.pcap
--      tshark -X lua_script:tools/wireshark/nanopu.lua -r capture.pcap -V
-- or copy it into your Wireshark personal plugins folder.

local proto = Proto("nanopu", "nanoPU transport")

local FLAG_NAMES = { "DATA", "ACK", "NACK", "PULL", "GRANT", "CHOP", "MCAST", "RESEND" }
local PROTOCOLS = { [0x99] = "NDP", [0x98] = "Homa" }

local f = proto.fields
f.flags = ProtoField.uint8("nanopu.flags", "Flags", base.HEX)
for i, name in ipairs(FLAG_NAMES) do
  f["flag_" .. name:lower()] = ProtoField.bool("nanopu.flags." .. name:lower(), name, 8, nil, 2 ^ (i - 1))
end
f.priority = ProtoField.uint8("nanopu.priority", "Priority (Homa)", base.DEC)
f.src_context = ProtoField.uint16("nanopu.src_context", "Source context", base.DEC)
f.dst_context = ProtoField.uint16("nanopu.dst_context", "Destination context", base.DEC)
f.msg_id = ProtoField.uint16("nanopu.msg_id", "Message id", base.DEC)
f.msg_len = ProtoField.uint16("nanopu.msg_len", "Message length (bytes)", base.DEC)
f.pkt_offset = ProtoField.uint16("nanopu.pkt_offset", "Packet offset (index in message)", base.DEC)
f.credit = ProtoField.uint16("nanopu.credit", "Credit (PULL total / GRANT offset / DATA transmission)", base.DEC)
f.mcast_first = ProtoField.uint32("nanopu.mcast_first", "Multicast first node", base.DEC)
f.mcast_count = ProtoField.uint32("nanopu.mcast_count", "Multicast node count (0: unicast)", base.DEC)
f.mcast_seq = ProtoField.uint32("nanopu.mcast_seq", "Multicast sequence", base.DEC)
f.reserved = ProtoField.uint32("nanopu.reserved", "Reserved", base.HEX)
f.word = ProtoField.uint64("nanopu.word", "Payload word", base.HEX)
f.padding = ProtoField.bytes("nanopu.padding", "Padding")

local HEADER_LEN = 30

-- The names of the flag bits set in `v`, joined by "|".
local function flag_text(v)
  local names = {}
  for i, name in ipairs(FLAG_NAMES) do
    if bit.band(v, 2 ^ (i - 1)) ~= 0 then names[#names + 1] = name end
  end
  return table.concat(names, "|")
end

local function add_header(tree, buf)
  local flags = tree:add(f.flags, buf(0, 1))
  for _, name in ipairs(FLAG_NAMES) do flags:add(f["flag_" .. name:lower()], buf(0, 1)) end
  local fields = {
    { f.priority, 1, 1 }, { f.src_context, 2, 2 }, { f.dst_context, 4, 2 }, { f.msg_id, 6, 2 },
    { f.msg_len, 8, 2 }, { f.pkt_offset, 10, 2 }, { f.credit, 12, 2 }, { f.mcast_first, 14, 4 },
    { f.mcast_count, 18, 4 }, { f.mcast_seq, 22, 4 }, { f.reserved, 26, 4 },
  }
  for _, x in ipairs(fields) do tree:add(x[1], buf(x[2], x[3])) end
end

-- DATA payload as big-endian words; padding for trimmed and control packets.
local function add_body(tree, buf, data)
  local rest = buf:len() - HEADER_LEN
  if rest <= 0 then return end
  if not data then
    tree:add(f.padding, buf(HEADER_LEN, rest))
    return
  end
  local words = tree:add(buf(HEADER_LEN, rest), string.format("Payload (%d bytes)", rest))
  for at = HEADER_LEN, buf:len() - 8, 8 do words:add(f.word, buf(at, 8)) end
end

function proto.dissector(buf, pinfo, tree)
  if buf:len() < HEADER_LEN then return 0 end
  local v = buf(0, 1):uint()
  local kind = PROTOCOLS[pinfo.match_uint] or "nanoPU"
  pinfo.cols.protocol = "nanoPU " .. kind
  local data = bit.band(v, 1) ~= 0 and bit.band(v, 32) == 0
  pinfo.cols.info = string.format("%s %d->%d msg %d pkt %d len %d%s", flag_text(v), buf(2, 2):uint(),
    buf(4, 2):uint(), buf(6, 2):uint(), buf(10, 2):uint(), buf(8, 2):uint(),
    bit.band(v, 24) ~= 0 and string.format(" credit %d", buf(12, 2):uint()) or "")
  local sub = tree:add(proto, buf(0, HEADER_LEN), "nanoPU transport (" .. kind .. "), " .. flag_text(v))
  add_header(sub, buf)
  add_body(tree, buf, data)
  return buf:len()
end

local ip_proto = DissectorTable.get("ip.proto")
ip_proto:add(0x99, proto)
ip_proto:add(0x98, proto)
