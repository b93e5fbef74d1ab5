/*
 * pkeyindex: test-only oracle for what the kernel does with a P_Key index, the
 * inputs perftest's --pkey_index reaches (perftest ctx_chk_pkey_index compares it
 * with ibv_query_device's max_pkeys, then ctx_modify_qp_to_init puts it in
 * ibv_qp_attr.pkey_index, a uint16_t).
 *
 * Prints one JSON object: the device's max_pkeys, the port's pkey_tbl_len, and for
 * each INDEX argument what ibv_query_pkey returns and whether ibv_modify_qp to INIT
 * with that pkey_index succeeds on an RC and on a UD QP (0, or the errno).
 *
 * Build: gcc -O2 -o pkeyindex pkeyindex.c -libverbs
 * Usage: pkeyindex DEVICE PORT INDEX...
 */
#include <endian.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int init_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type t, int port, int idx)
{
	struct ibv_qp_init_attr ia = {0};
	struct ibv_qp_attr at = {0};
	struct ibv_qp *qp;
	int flags = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	int rc;

	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = t;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &ia);
	if (!qp)
		return -errno;
	at.qp_state = IBV_QPS_INIT;
	at.pkey_index = (uint16_t)idx; /* as perftest: an int stored in a uint16_t */
	at.port_num = port;
	if (t == IBV_QPT_UD) {
		at.qkey = 0x11111111; /* perftest's DEFF_QKEY */
		flags |= IBV_QP_QKEY;
	} else {
		at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
		flags |= IBV_QP_ACCESS_FLAGS;
	}
	rc = ibv_modify_qp(qp, &at, flags);
	ibv_destroy_qp(qp);
	return rc;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i, n, port;

	if (argc < 3) {
		fprintf(stderr, "usage: pkeyindex DEVICE PORT INDEX...\n");
		return 2;
	}
	port = atoi(argv[2]);
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "pkeyindex: cannot open %s\n", argv[1]);
		return 1;
	}
	if (ibv_query_device(ctx, &da) || ibv_query_port(ctx, port, &pa)) {
		fprintf(stderr, "pkeyindex: query failed: %s\n", strerror(errno));
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	if (!cq) {
		fprintf(stderr, "pkeyindex: pd/cq: %s\n", strerror(errno));
		return 1;
	}
	printf("{\"max_pkeys\":%u,\"pkey_tbl_len\":%u,\"index\":[", da.max_pkeys, pa.pkey_tbl_len);
	for (i = 3; i < argc; i++) {
		int idx = atoi(argv[i]);
		__be16 pk = 0;
		int q = ibv_query_pkey(ctx, port, idx, &pk);
		int qerr = q ? errno : 0;
		int rc = init_qp(pd, cq, IBV_QPT_RC, port, idx);
		int ud = init_qp(pd, cq, IBV_QPT_UD, port, idx);
		printf("%s{\"index\":%d,\"query_rc\":%d,\"query_errno\":%d,\"pkey\":%u,\"rc_init\":%d,\"ud_init\":%d}",
		       i > 3 ? "," : "", idx, q, qerr, (unsigned)be16toh(pk), rc, ud);
	}
	printf("]}\n");
	return 0;
}
