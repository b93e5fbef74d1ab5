/*
 * qkeytraffic: test-only UD traffic on one RDMA port, the oracle for the Q_Key rule.
 *
 * For each case NAME,QA,QB,FROM,WR it creates two UD QPs A and B with Q_Keys QA and QB
 * (QB "gsi": B is the port's QP1, owned by the kernel, Q_Key 0x80010000), sends one
 * datagram from FROM (a or b) to the other with work-request Q_Key WR, and prints one
 * JSON line: whether the receiver got it and how qkey_viol_cntr (ibv_query_port) moved.
 *
 * No timed guesses: after the test packet the same sender QP sends a sentinel to a third
 * QP whose Q_Key it matches. rxe checks keys when a packet arrives, in the order the
 * sender's QP sent them (drivers/infiniband/sw/rxe/rxe_recv.c, check_keys), so once the
 * sentinel has arrived the counter already holds the test packet's verdict; a packet that
 * passed the check is then waited for until it arrives.
 *
 * Build: gcc -O2 -o qkeytraffic qkeytraffic.c -libverbs
 * Usage: qkeytraffic DEVICE PORT CASE...   (one JSON object per case on stdout)
 *        qkeytraffic DEVICE PORT --create QKEY   (can this user put QKEY in a UD QP?)
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GSI_QKEY 0x80010000u
#define BUF 256
#define GRH 40
#define WAIT_SECONDS 60

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static char *mem;
static int port;
static union ibv_gid gid;

struct qp {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint32_t qkey;
	int slot; /* its receive buffer in mem */
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int viol(uint32_t *q, uint32_t *p)
{
	struct ibv_port_attr a;
	if (ibv_query_port(ctx, port, &a))
		return -1;
	*q = a.qkey_viol_cntr;
	*p = a.bad_pkey_cntr;
	return 0;
}

/* make_qp: a UD QP in RTS with qkey; returns an errno-style code and a step name. */
static int make_qp(struct qp *q, uint32_t qkey, int slot, const char **step)
{
	struct ibv_qp_init_attr ia = {0};
	struct ibv_qp_attr at = {0};
	int rc;

	memset(q, 0, sizeof(*q));
	q->qkey = qkey;
	q->slot = slot;
	*step = "create_cq";
	q->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!q->cq)
		return errno;
	ia.send_cq = q->cq;
	ia.recv_cq = q->cq;
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	*step = "create_qp";
	q->qp = ibv_create_qp(pd, &ia);
	if (!q->qp)
		return errno;
	at.qp_state = IBV_QPS_INIT;
	at.pkey_index = 0;
	at.port_num = port;
	at.qkey = qkey;
	*step = "modify_qp INIT (qkey)";
	rc = ibv_modify_qp(q->qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	if (rc)
		return rc;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	*step = "modify_qp RTR";
	rc = ibv_modify_qp(q->qp, &at, IBV_QP_STATE);
	if (rc)
		return rc;
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = 0;
	*step = "modify_qp RTS";
	return ibv_modify_qp(q->qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static void free_qp(struct qp *q)
{
	if (q->qp)
		ibv_destroy_qp(q->qp);
	if (q->cq)
		ibv_destroy_cq(q->cq);
	memset(q, 0, sizeof(*q));
}

static int post_recv(struct qp *q)
{
	struct ibv_sge sge = {(uintptr_t)(mem + q->slot * BUF), BUF, mr->lkey};
	struct ibv_recv_wr wr = {0}, *bad;
	wr.wr_id = q->slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(q->qp, &wr, &bad);
}

static int post_send(struct qp *from, struct ibv_ah *ah, uint32_t qpn, uint32_t wr_qkey)
{
	struct ibv_sge sge = {(uintptr_t)(mem + 7 * BUF), 16, mr->lkey};
	struct ibv_send_wr wr = {0}, *bad;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = wr_qkey;
	return ibv_post_send(from->qp, &wr, &bad);
}

/* recvd: polls q's CQ once; 1 when a receive completed successfully. Send completions
 * (the sender's own) are consumed and ignored. */
static int recvd(struct qp *q)
{
	struct ibv_wc wc[4];
	int n, i, got = 0;
	while ((n = ibv_poll_cq(q->cq, 4, wc)) > 0)
		for (i = 0; i < n; i++)
			if (wc[i].opcode == IBV_WC_RECV && wc[i].status == IBV_WC_SUCCESS)
				got = 1;
	return got;
}

static uint32_t parse_qkey(const char *s)
{
	if (!strcmp(s, "gsi"))
		return GSI_QKEY;
	return (uint32_t)strtoul(s, NULL, 16);
}

static void run_case(char *spec, struct ibv_ah *ah)
{
	char *name = strtok(spec, ","), *sa = strtok(NULL, ","), *sb = strtok(NULL, ","),
	     *sfrom = strtok(NULL, ","), *swr = strtok(NULL, ",");
	struct qp a, b, s;
	struct qp *snd, *rcv;
	uint32_t q0, p0, q1, p1, wr, rqpn;
	const char *step = "";
	int rc, gsi, from_b, got = 0, sentinel = 0;
	double t0;

	if (!name || !sa || !sb || !sfrom || !swr) {
		printf("{\"error\":\"bad case spec\"}\n");
		return;
	}
	gsi = !strcmp(sb, "gsi");
	from_b = !strcmp(sfrom, "b");
	wr = parse_qkey(swr);
	memset(&b, 0, sizeof(b));
	if ((rc = make_qp(&a, parse_qkey(sa), 0, &step)) ||
	    (!gsi && (rc = make_qp(&b, parse_qkey(sb), 1, &step)))) {
		printf("{\"case\":\"%s\",\"error\":\"%s: %s\"}\n", name, step, strerror(rc));
		free_qp(&a);
		free_qp(&b);
		return;
	}
	if (gsi && from_b) {
		printf("{\"case\":\"%s\",\"error\":\"QP1 belongs to the kernel: cannot send from it\"}\n", name);
		free_qp(&a);
		return;
	}
	snd = from_b ? &b : &a;
	rcv = from_b ? &a : &b;
	rqpn = gsi ? 1 : rcv->qp->qp_num;
	/* The sentinel QP s matches the sentinel's WR Q_Key 0x5e (no top bit: every rule
	 * sends it verbatim). */
	if ((rc = make_qp(&s, 0x5e, 2, &step))) {
		printf("{\"case\":\"%s\",\"error\":\"sentinel %s: %s\"}\n", name, step, strerror(rc));
		free_qp(&a);
		free_qp(&b);
		return;
	}
	if ((!gsi && post_recv(rcv)) || post_recv(&s) || viol(&q0, &p0)) {
		printf("{\"case\":\"%s\",\"error\":\"post_recv/query_port: %s\"}\n", name, strerror(errno));
		goto out;
	}
	if ((rc = post_send(snd, ah, rqpn, wr)) || (rc = post_send(snd, ah, s.qp->qp_num, 0x5e))) {
		printf("{\"case\":\"%s\",\"error\":\"post_send: %s\"}\n", name, strerror(rc));
		goto out;
	}
	for (t0 = now(); !sentinel && now() - t0 < WAIT_SECONDS;)
		sentinel = recvd(&s);
	viol(&q1, &p1);
	if (!gsi) {
		got = recvd(rcv);
		/* Passed the key checks: it is on its way to the receiver's queue. */
		for (t0 = now(); sentinel && !got && q1 == q0 && p1 == p0 && now() - t0 < WAIT_SECONDS;)
			got = recvd(rcv);
	}
	printf("{\"case\":\"%s\",\"qkey_a\":\"0x%08x\",\"qkey_b\":\"0x%08x\",\"from\":\"%s\",\"wr_qkey\":\"0x%08x\","
	       "\"gsi\":%s,\"sentinel\":%s,\"received\":%s,\"qkey_viol_before\":%u,\"qkey_viol_after\":%u,"
	       "\"bad_pkey_before\":%u,\"bad_pkey_after\":%u}\n",
	       name, a.qkey, gsi ? GSI_QKEY : b.qkey, from_b ? "b" : "a", wr, gsi ? "true" : "false",
	       sentinel ? "true" : "false", gsi ? "null" : (got ? "true" : "false"), q0, q1, p0, p1);
out:
	fflush(stdout);
	free_qp(&a);
	free_qp(&b);
	free_qp(&s);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_ah_attr ah_attr = {0};
	struct ibv_ah *ah;
	int i, n;

	if (argc < 4) {
		fprintf(stderr, "usage: qkeytraffic DEVICE PORT CASE... | --create QKEY\n");
		return 2;
	}
	port = atoi(argv[2]);
	list = ibv_get_device_list(&n);
	if (!list) {
		perror("ibv_get_device_list");
		return 3;
	}
	for (i = 0; i < n && strcmp(ibv_get_device_name(list[i]), argv[1]); i++)
		;
	if (i == n || !(ctx = ibv_open_device(list[i]))) {
		fprintf(stderr, "cannot open %s\n", argv[1]);
		return 3;
	}
	pd = ibv_alloc_pd(ctx);
	mem = calloc(8, BUF);
	mr = pd ? ibv_reg_mr(pd, mem, 8 * BUF, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr || ibv_query_gid(ctx, port, 0, &gid)) {
		perror("alloc_pd/reg_mr/query_gid");
		return 3;
	}
	if (!strcmp(argv[3], "--create")) {
		struct qp q;
		const char *step = "";
		int rc = make_qp(&q, parse_qkey(argv[4]), 0, &step);
		printf("{\"create_qkey\":\"0x%08x\",\"ok\":%s,\"step\":\"%s\",\"error\":\"%s\"}\n",
		       parse_qkey(argv[4]), rc ? "false" : "true", rc ? step : "", rc ? strerror(rc) : "");
		free_qp(&q);
		return 0;
	}
	/* RoCE: every address carries a GRH; GID 0 is this port's own, so packets loop back. */
	ah_attr.is_global = 1;
	ah_attr.grh.dgid = gid;
	ah_attr.grh.sgid_index = 0;
	ah_attr.grh.hop_limit = 1;
	ah_attr.port_num = port;
	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah) {
		perror("create_ah");
		return 3;
	}
	for (i = 3; i < argc; i++)
		run_case(argv[i], ah);
	return 0;
}
