package enrich

import "testing"

// TestRules_AO4RDGatewayRPCFault checks the RD Gateway RPC-transport fault
// class the group AO4 round added (93-ao4-thin.yaml): a DCE/RPC fault whose
// status is one of the gateway's E_PROXY_* HRESULTs, in FreeRDP's older
// two-line form (bare and with WLog prefixes) and its current one-line
// form; and what it must not name: an RPC fault with an ordinary RPC status
// (Exchange's RPC proxy faults so), an E_PROXY_* name outside an RPC fault,
// and the fault line without its status.
func TestRules_AO4RDGatewayRPCFault(t *testing.T) {
	const rule = "ao4-rdgateway-rpc-fault-e-proxy-status"
	checkMatches(t, []matchCase{
		{"freerdp 1.x printf form", bannerService(443, "tcp", "connected to GATEWAY:443\nRPC Fault PDU:\nstatus: E_PROXY_RAP_ACCESSDENIED (0x800759DA)\n"), wantMatch{Vendor: "Microsoft", Rule: rule}},
		{"freerdp 2.0 wlog two-line form", bannerService(443, "tcp", "[10:01:02:003] [100:101] [ERROR][com.freerdp.core.gateway.rpc] - RPC Fault PDU:\n[10:01:02:003] [100:101] [ERROR][com.freerdp.core.gateway.rpc] - status: E_PROXY_NAP_ACCESSDENIED (0x800759DB)\n"), wantMatch{Vendor: "Microsoft", Rule: rule}},
		{"freerdp 2.x and 3.x one-line form", bannerService(443, "tcp", "[ERROR][com.freerdp.core.gateway.rpc] - [rpc_recv_fault_pdu]: RPC Fault PDU: status=E_PROXY_TS_CONNECTFAILED\n"), wantMatch{Vendor: "Microsoft", Rule: rule}},
		{"rpc fault with an ordinary rpc status", bannerService(443, "tcp", "RPC Fault PDU: status=nca_s_fault_access_denied\n"), wantMatch{}},
		{"e_proxy name outside an rpc fault", bannerService(443, "tcp", "gateway refused: E_PROXY_RAP_ACCESSDENIED (0x800759DA)\n"), wantMatch{}},
		{"fault line without its status", bannerService(443, "tcp", "RPC Fault PDU:\nTsProxyCreateChannel: error reading response\n"), wantMatch{}},
	})
}
