/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMAP opcode table (see rdmap_op.h). Opcodes 0xc-0xf are reserved:
 * their zero entries make the parser answer "invalid opcode".
 */
#include "iwarp/rdmap_op.h"

#define UNTAGGED RNIC_DDP_UNTAGGED_HDR_LEN
#define TAGGED RNIC_DDP_TAGGED_HDR_LEN

const struct rnic_rdmap_op_info rnic_rdmap_ops[RNIC_RDMAP_OPCODE_MASK + 1] = {
	[RNIC_RDMAP_OP_WRITE] = {
		.hdr_len = TAGGED, .tagged = true,
		.place = RNIC_PLACE_TAGGED, .dir = RNIC_DIR_REQUEST,
		.new_op = true,
	},
	[RNIC_RDMAP_OP_READ_REQ] = {
		.hdr_len = UNTAGGED + sizeof(struct rnic_rdmap_read_req_hdr),
		.qn = RNIC_DDP_QN_READ_REQ,
		.place = RNIC_PLACE_HDR, .dir = RNIC_DIR_REQUEST,
		.new_op = true,
	},
	[RNIC_RDMAP_OP_READ_RESP] = {
		.hdr_len = TAGGED, .tagged = true,
		.place = RNIC_PLACE_TAGGED, .dir = RNIC_DIR_RESPONSE,
		.completes = true,
	},
	[RNIC_RDMAP_OP_SEND] = {
		.hdr_len = UNTAGGED, .qn = RNIC_DDP_QN_SEND,
		.place = RNIC_PLACE_RECV, .dir = RNIC_DIR_REQUEST,
		.completes = true, .new_op = true,
	},
	[RNIC_RDMAP_OP_SEND_INV] = {
		.hdr_len = UNTAGGED, .qn = RNIC_DDP_QN_SEND,
		.place = RNIC_PLACE_RECV, .dir = RNIC_DIR_REQUEST,
		.completes = true, .new_op = true, .invalidates = true,
	},
	[RNIC_RDMAP_OP_SEND_SE] = {
		.hdr_len = UNTAGGED, .qn = RNIC_DDP_QN_SEND,
		.place = RNIC_PLACE_RECV, .dir = RNIC_DIR_REQUEST,
		.completes = true, .new_op = true, .solicited = true,
	},
	[RNIC_RDMAP_OP_SEND_SE_INV] = {
		.hdr_len = UNTAGGED, .qn = RNIC_DDP_QN_SEND,
		.place = RNIC_PLACE_RECV, .dir = RNIC_DIR_REQUEST,
		.completes = true, .new_op = true, .solicited = true, .invalidates = true,
	},
	[RNIC_RDMAP_OP_TERMINATE] = {
		/* the quoted headers are of variable length: payload */
		.hdr_len = UNTAGGED + sizeof(struct rnic_rdmap_term_hdr),
		.qn = RNIC_DDP_QN_TERMINATE,
		.place = RNIC_PLACE_TERM, .dir = RNIC_DIR_BOTH,
	},
	[RNIC_RDMAP_OP_IMM_DATA] = {
		.hdr_len = UNTAGGED + sizeof(struct rnic_rdmap_imm_hdr),
		.qn = RNIC_DDP_QN_SEND,
		.place = RNIC_PLACE_HDR, .dir = RNIC_DIR_REQUEST,
		.completes = true,
	},
	[RNIC_RDMAP_OP_IMM_DATA_SE] = {
		.hdr_len = UNTAGGED + sizeof(struct rnic_rdmap_imm_hdr),
		.qn = RNIC_DDP_QN_SEND,
		.place = RNIC_PLACE_HDR, .dir = RNIC_DIR_REQUEST,
		.completes = true, .solicited = true,
	},
	[RNIC_RDMAP_OP_ATOMIC_REQ] = {
		/* shares queue 1, its MSNs and the IRD with Read Requests */
		.hdr_len = UNTAGGED + sizeof(struct rnic_rdmap_atomic_req_hdr),
		.qn = RNIC_DDP_QN_READ_REQ,
		.place = RNIC_PLACE_HDR, .dir = RNIC_DIR_REQUEST,
		.new_op = true,
	},
	[RNIC_RDMAP_OP_ATOMIC_RESP] = {
		.hdr_len = UNTAGGED + sizeof(struct rnic_rdmap_atomic_resp_hdr),
		.qn = RNIC_DDP_QN_ATOMIC_RESP,
		.place = RNIC_PLACE_HDR, .dir = RNIC_DIR_RESPONSE,
		.completes = true,
	},
};
