#!/bin/bash
# test_account.sh -- bench/account.py, the time account of imports: what
# bench/account.bt prints for two samples of two sides, made up here, must
# come out as medians per side in seconds, blocked time sorted into its
# causes by the first frame of the stack that names one (a FUSE request
# below balance_dirty_pages is dirty throttling; an unknown stack is
# "other"), and FUSE requests named by opcode.  Bad arguments are refused.
source "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || fail "python3 is not installed"
T=$(mktempdir)
# sample FILE CPU_NS THROTTLE_NS WRITES
sample() {
	cat >"$1" <<-EOT
		Attaching 4 probes...
		@cpu[postgres]: $2
		@cpu[pgiofs]: 300000000
		@kcpu[kworker/u8:1]: 100000000
		@runq[postgres]: 50000000
		@off[postgres, 
		    __schedule+1576
		    schedule+35
		    request_wait_answer+200
		    balance_dirty_pages+1000
		    generic_perform_write+300
		]: $3
		@off[postgres, 
		    __schedule+1576
		    schedule+35
		    io_schedule+63
		    folio_wait_writeback+30
		]: 250000000
		@off[postgres, 
		    __schedule+1576
		    schedule+35
		    mystery_wait+12
		]: 70000000
		@fuse_n[16]: $4
		@fuse_ns[16]: 2000000000
		@fuse_n[22]: 73
	EOT
}
sample "$T/n1" 1000000000 0 0
sample "$T/n2" 3000000000 0 0
sample "$T/p1" 2000000000 400000000 100
sample "$T/p2" 2500000000 600000000 300
out=$(python3 "$TOP/bench/account.py" "native=$T/n1,$T/n2" "pgiofs=$T/p1,$T/p2") ||
	fail "account.py failed: $out"
echo "$out"
want() {
	grep -qxF -- "$1" <<<"$out" || fail "no line \"$1\" in the account"
}
want "$(printf '%-58s%12.2f%12.2f%+12.2f' "  postgres" 2.00 2.25 0.25)"
want "$(printf '%-58s%12.2f%12.2f%+12.2f' "  dirty throttle (balance_dirty_pages)" 0.00 0.50 0.50)"
want "$(printf '%-58s%12.2f%12.2f%+12.2f' "  device I/O (wait for writeback, a flush, a read)" 0.25 0.25 0.00)"
want "$(printf '%-58s%12.2f%12.2f%+12.2f' "  other" 0.07 0.07 0.00)"
want "$(printf '%-58s%12.0f%12.0f%+12.0f' "  WRITE (count)" 0 200 200)"
want "$(printf '%-58s%12.0f%12.0f%+12.0f' "  GETXATTR (count)" 73 73 0)"
grep -q "FUSE request (waiting" <<<"$out" && fail "a FUSE request below balance_dirty_pages was not taken as dirty throttling"
if err=$(python3 "$TOP/bench/account.py" native 2>&1); then
	fail "account.py took an argument without SIDE=FILES"
fi
[[ $err == *'"native": want SIDE=FILE'* ]] || fail "account.py's refusal does not name the argument: $err"
if err=$(python3 "$TOP/bench/account.py" "native=$T/none" 2>&1); then
	fail "account.py took a file that does not exist"
fi
[[ $err == *"$T/none"* ]] || fail "account.py's error does not name the missing file: $err"
echo ok
