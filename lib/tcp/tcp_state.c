/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RFC 9293 connection state machine as a table: the input and close
 * paths ask it for the next state, so every transition is in one place and
 * table-tested.
 */
#include "tcp/tcp_internal.h"

#define X TCP_NSTATES   /* not a valid event in this state */

static const uint8_t next[TCP_NSTATES][TCP_NEVENTS] = {
	/*                  SYN               SYN_ACK          ACK_OF_SYN       FIN             ACK_OF_FIN     CLOSE           RST         TIMEOUT */
	[TCP_CLOSED]       = { X,              X,               X,               X,              X,             X,              X,          X },
	[TCP_LISTEN]       = { TCP_SYN_RECEIVED, X,             X,               X,              X,             TCP_CLOSED,     X,          X },
	[TCP_SYN_SENT]     = { TCP_SYN_RECEIVED, TCP_ESTABLISHED, X,             X,              X,             TCP_CLOSED,     TCP_CLOSED, TCP_CLOSED },
	[TCP_SYN_RECEIVED] = { X,              X,               TCP_ESTABLISHED, TCP_CLOSE_WAIT, X,             TCP_FIN_WAIT_1, TCP_CLOSED, TCP_CLOSED },
	[TCP_ESTABLISHED]  = { X,              X,               X,               TCP_CLOSE_WAIT, X,             TCP_FIN_WAIT_1, TCP_CLOSED, TCP_CLOSED },
	[TCP_FIN_WAIT_1]   = { X,              X,               X,               TCP_CLOSING,    TCP_FIN_WAIT_2, X,             TCP_CLOSED, TCP_CLOSED },
	[TCP_FIN_WAIT_2]   = { X,              X,               X,               TCP_TIME_WAIT,  X,             X,              TCP_CLOSED, TCP_CLOSED },
	[TCP_CLOSE_WAIT]   = { X,              X,               X,               X,              X,             TCP_LAST_ACK,   TCP_CLOSED, TCP_CLOSED },
	[TCP_CLOSING]      = { X,              X,               X,               X,              TCP_TIME_WAIT, X,              TCP_CLOSED, TCP_CLOSED },
	[TCP_LAST_ACK]     = { X,              X,               X,               X,              TCP_CLOSED,    X,              TCP_CLOSED, TCP_CLOSED },
	[TCP_TIME_WAIT]    = { X,              X,               X,               X,              X,             X,              TCP_CLOSED, TCP_CLOSED },
};

enum tcp_state tcp_next_state(enum tcp_state s, enum tcp_event ev)
{
	if ((unsigned)s >= TCP_NSTATES || (unsigned)ev >= TCP_NEVENTS)
		return TCP_NSTATES;
	return (enum tcp_state)next[s][ev];
}

const char *tcp_state_name(enum tcp_state s)
{
	static const char *const names[TCP_NSTATES] = {
		"CLOSED", "LISTEN", "SYN_SENT", "SYN_RECEIVED", "ESTABLISHED",
		"FIN_WAIT_1", "FIN_WAIT_2", "CLOSE_WAIT", "CLOSING", "LAST_ACK",
		"TIME_WAIT",
	};
	return (unsigned)s < TCP_NSTATES ? names[s] : "?";
}
