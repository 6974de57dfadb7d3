/* leasehold's election as src/election/elector.cpp runs it, for SPIN (model/README.md).
 *
 * One process per replica, one for real time. Every action is atomic and its comment names the
 * function of src/election/elector.cpp (or client-go's leaderelection.go) it stands for.
 * Time is discrete: ticks of 500 ms (SEC = 2 a second). It is kept relative: every instant a
 * replica remembers is stored as "ticks until" or "ticks since" on its own monotonic clock, so
 * the search covers runs of any length, not just a horizon. Each clock may drift (stand still for a tick or
 * jump a tick) within the bound DRIFT_GAP.
 *
 * Configuration (spin -D...): N (2 or 3); GOPEER: the last replica is a client-go elector;
 * COARSE: leasehold observers compare whole-second records (annotation locks; a client-go
 * observer always does); STALE: the watch may deliver an event older than a Get already
 * returned; MUTANT=1..7 (model/README.md).
 * OBSERVE: every pod's manager is a client-go elector (as GOPEER's), and beside each runs
 * leasehold in observe mode (src/election/observer.cpp), which never writes: MUTANT=8..11. */

#ifndef N
#define N 2
#endif
#ifndef MUTANT
#define MUTANT 0
#endif
/* Timings in ticks (validated by config.cpp: LD > RD > 1.2 RP, LD - RD >= 1 s = 4 ticks).
 * TREQ: the HTTP request timeout, max(RD/2, 1 s) (src/app/app.cpp). */
#ifndef LD
#define LD 4
#endif
#ifndef RD
#define RD 2
#endif
#ifndef RP
#define RP 1
#endif
#ifndef TREQ
#define TREQ 2
#endif
/* RI: the renew interval, the pause after a successful renew (ElectionConfig::renew_interval(),
 * default: retry-period, the rhythm the other runs check). ROOM: kRenewAttemptRoom, what a renew
 * attempt due at an interval longer than RP leaves for one retry (StepCandidateOrLeader's cut). */
#ifndef RI
#define RI RP
#endif
#ifndef ROOM
#define ROOM 2
#endif
#ifndef SEC
#define SEC 2            /* ticks per second: records keep whole seconds */
#endif
#define REL_LD SEC       /* a released record carries leaseDurationSeconds 1 */
#define CAP LD           /* "ticks since" counters saturate here; nothing compares beyond */
#define NEVER 255
#define OCAP (8 + LD)    /* mutant 3: wall-clock ages saturate here */
/* retry-period x (1 + rand x 1.2): whole ticks below 2.2 x RP */
#if RP >= 2
#define JITTER(x) if :: x = RP :: x = RP + 1 :: x = RP + 2 fi
#else
#define JITTER(x) if :: x = RP :: x = RP + 1 fi
#endif
/* Clock-rate drift: DRIFTS times per run, one monotonic clock stands still for a tick or jumps
 * a tick (real time moving on by one). Mutant 7: clocks may do so at every tick. */
#ifndef DRIFTS
#define DRIFTS 1
#endif
#if MUTANT == 7
#define DRIFT_OK true
#define DRIFT_USE skip
#else
#define DRIFT_OK (drifts_left > 0)
#define DRIFT_USE drifts_left--
#endif
/* one wall-clock step per run, forward by WSTEP ticks */
#ifndef WSTEP
#define WSTEP 4
#endif
/* budgets per run */
#ifndef PAUSES
#define PAUSES 1
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef STOPS
#define STOPS 1
#endif
#ifndef ACKS
#define ACKS 1
#endif
/* 1: an Update may be answered with an error (5xx) without effect */
#ifndef ERRS
#define ERRS 1
#endif
#ifndef WATCH
#define WATCH 1
#endif
/* The fixes of the three findings (model/README.md), as the code has them; 0 restores the old
 * behaviour, which check.sh requires to fail.
 * FIX1: step 3 of TryAcquireOrRenew also re-observes when the fetched holder differs from the
 * observed one, and Observe() takes an event as unchanged only if raw and holder are the same.
 * FIX2: the slow path stamps renewTime when its Update is sent, not when the attempt began.
 * FIX3: Observe() on a replica that does not lead ignores an event naming itself. */
#ifndef FIX1
#define FIX1 1
#endif
#ifndef FIX2
#define FIX2 1
#endif
#ifndef FIX3
#define FIX3 1
#endif

#if defined(OBSERVE) && !defined(GOPEER)
#define GOPEER
#endif
#if defined(COARSE) || defined(GOPEER)
#define USEWALL 1
#else
#define USEWALL 0
#endif

#define LH 0
#define GO 1
/* Phase in elector.h */
#define CAND 0
#define LEAD 1
#define HELDOFF 2
#define STOPPING 3
#define DONE 4
/* where a replica's code is */
#define IDLE 0    /* Run(): waiting until the next step is due */
#define FPUT 1    /* TryAcquireOrRenew step 1: fast-path Update in flight */
#define GET 2     /* TryAcquireOrRenew step 2: Get in flight */
#define PUT 3     /* TryAcquireOrRenew step 4: Update in flight */
#define RGET 4    /* Release: Get in flight */
#define RPUT 5    /* Release: Update in flight */

/* the lock object: holder (0 = "", i+1 = replica i) and leaseDurationSeconds (1: LD, 0: 1 s).
 * resourceVersions, terms and timestamps are kept only as the equalities the code tests. */
byte r_h;
bool r_ld;
#if USEWALL
byte r_w;          /* who stamped the record's renewTime */
bool r_fresh;      /* the stamper's wall clock is still in the second of renewTime */
#endif

byte kind[N];
bool pause_left = PAUSES, crash_left = CRASHES, stop_left = STOPS, ack_left = ACKS;
byte drifts_left = DRIFTS;
#if USEWALL || MUTANT == 3
bool wstep_left = 1;
#endif

/* per replica: the Elector's fields */
byte pc[N], phase[N];
byte nxt[N];                 /* ticks until the next step is due (NEVER: not before a wake-up) */
bool paused[N], dead[N], stopreq[N], relreq[N], safe_mode[N], woken[N], checknow[N];
bool obs[N];                 /* seen_.observed */
byte oh[N];                  /* seen_.record.holder_identity */
bool old[N];                 /* seen_.record.lease_duration_seconds (1: LD) */
byte osince[N];              /* ticks since observed_time_ */
bool osame[N];               /* observed_raw_ equals the lock's current raw */
byte claim[N];               /* ticks until claim_until_ (0: none or past); Go peer: last send + RD */
byte promised[N];            /* ticks until promised_until_ */
bool pvoid[N];               /* promises void: immediate stop, or acknowledged release */
bool cur[N];                 /* the Lock's cached object carries the current resourceVersion */
#if USEWALL
byte wph[N];                 /* wall clock: ticks into the current second */
#endif
/* the attempt in progress */
/* LeaseValidLocked(now) for TryAcquireOrRenew's `now` (the attempt's start): true if it held
 * then, or if the observation has been renewed since (it is then stamped later) */
bool avalid[N];
byte adl[N];                 /* ticks until the attempt's deadline */
bool awl[N], aheld[N];       /* was leader; a release for POST /release */
bool awrote[N];              /* a write of this attempt was applied (same wall stamp) */
#if USEWALL
bool akeep[N];               /* when stamped, the record was ours, stamped in the same second */
bool afresh[N];              /* the wall clock is still in the second of the attempt's stamp */
#endif
byte pdl[N];                 /* Go peer: ticks until the renew poll gives up (0: no poll) */
/* the request in flight */
byte qsince[N], qdl[N], qapp[N];  /* ticks since sent, until deadline; applied: 1 ok, 2 conflict */
bool qcur[N];                /* its applied write is still the latest */
/* the watch: one pending event per replica */
bool eset[N];
#ifdef STALE
byte eh[N];
bool eld[N], esame[N], ecur[N];  /* event raw = observed raw; event = current record */
#define EH(i) eh[i]
#define ELD(i) eld[i]
#define ESAME(i) esame[i]
#define ECUR(i) ecur[i]
#define EW(x) x
#else
/* without STALE a pending event always carries the latest write, i.e. the current record */
#define EH(i) r_h
#define ELD(i) r_ld
#define ESAME(i) osame[i]
#define ECUR(i) 1
#define EW(x) skip
#endif
#if MUTANT == 3
byte rage;                   /* real ticks since the record's renewTime was stamped */
byte woff[N];                /* wall-clock offsets */
byte orage[N];               /* local wall clock minus the observed record's renewTime, + 8 */
byte erage[N];
#endif

#ifdef OBSERVE
/* Observe mode (observer.cpp), one observer per pod, on its pod's clock. Its timings in ticks:
 * OLD its --lease-duration, ORD its --renew-deadline (the flags refuse OLD - ORD < OMARGIN, so
 * the default is the longest they accept), its retry-period RP. The managers write LD as the
 * record's leaseDurationSeconds. OSPAN: how long a "yes" runs after its evidence S (ClaimLocked):
 * min(renew-deadline, min(record's LD, --lease-duration) - kObserveMargin); mutant 10: the
 * record's LD alone; mutant 11: min(renew-deadline, LD), without the margin. */
#define OMARGIN (2 * SEC)    /* kObserveMargin, 2 s */
#ifndef OLD
#define OLD LD
#endif
#ifndef ORD
#define ORD (OLD - OMARGIN)
#endif
#if LD < OLD
#define OLDMIN LD
#else
#define OLDMIN OLD
#endif
#if MUTANT == 10
#define OSPAN OLDMIN
#elif MUTANT == 11
#if ORD < OLDMIN
#define OSPAN ORD
#else
#define OSPAN OLDMIN
#endif
#else
#if ORD < OLDMIN - OMARGIN
#define OSPAN ORD
#else
#define OSPAN (OLDMIN - OMARGIN)
#endif
#endif
#if ORD < OSPAN
#define OSCAP OSPAN
#else
#define OSCAP ORD
#endif
#ifndef ORP
#define ORP RP             /* its --retry-period */
#endif
#ifndef OPAUSES
#define OPAUSES 1
#endif
/* OBSALL: an observer in every pod; by default only pod A's runs: A may be the first holder or
 * the one taking over (the other pod's clock starts anywhere within its second), and a second
 * observer, which never writes, changes nothing the first one or the managers see */
#ifdef OBSALL
#define OBSRUN(i) (1)
#else
#define OBSRUN(i) ((i) == 0)
#endif
#define OIDLE 0   /* Run(): waiting until the next Get is due */
#define OGET 1    /* Step(): Get sent, not yet read by the server */
#define OREAD 2   /* Step(): the server has read the record, the answer is on its way */
byte opc[N];
bool opaused[N], owoken[N];
byte osend[N];     /* ticks since the last Get was sent (saturates at OSCAP) */
bool rme[N], rsame[N], rcur[N];  /* the in-flight Get's read: holder is this pod; same key as
                                  * last_key_; still the lock's current key */
bool oobs[N];      /* last_key_ is set (a Get has answered) */
bool okcur[N];     /* last_key_ equals the lock's current key */
bool ome[N];       /* current_ (the last answered Get) names this pod */
byte oev[N];       /* ticks since last_send_, the last answered Get's send (mutant 8: its answer) */
byte oclaim[N];    /* ticks until evidence_ + OSPAN (0: no evidence, or past) */
bool oveto[N];     /* veto_since_ is set */
bool oafter[N];    /* the Get in flight was sent after veto_since_ */
bool oeset[N], oeme[N];  /* the watch: one pending event; it names this pod */
bool opause_left = OPAUSES;
/* ClaimLocked() and SnapshotLocked(now): "yes" for this pod. The answer is judged from the clock
 * when asked, and the main container is taken to ask at every instant, even while the observer's
 * loop is stalled (a paused observer is taken to answer: the worse case). */
#define OYES(i) (ome[i] && !oveto[i] && oclaim[i] > 0)
/* P3, the claim (model/README.md): while observer i says yes, the lock record names pod i: no
 * other pod's manager has written itself holder. Not the managers' belief (GOLEAD): two
 * client-go managers' beliefs can overlap by themselves, which no observer can mend; OBSBELIEF
 * asks for it too and shows such an overlap (with drift and -DORP=1). */
#ifdef OBSBELIEF
#define OBAD(i, j) (OYES(i) && (r_h != (i) + 1 || GOLEAD(j)))
#else
#define OBAD(i, j) (OYES(i) && r_h != (i) + 1)
#endif
#if N == 2 && defined(OBSALL)
#define P3 (OBAD(0, 1) || OBAD(1, 0))
#elif defined(OBSALL)
#define P3 (OBAD(0, 1) || OBAD(0, 2) || OBAD(1, 0) || OBAD(1, 2) || OBAD(2, 0) || OBAD(2, 1))
#elif N == 2
#define P3 OBAD(0, 1)
#else
#define P3 (OBAD(0, 1) || OBAD(0, 2))
#endif
#define CHECK_OBS ; \
  if :: P3 -> printf("t=%d VIOLATION of P3: an observer says yes while another pod's manager holds the lock\n", rt) :: else fi; \
  assert(!P3)
#define OURG(i) (OBSRUN(i) && !opaused[i] && ((opc[i] == OIDLE && (owoken[i] || osend[i] >= ORP)) || \
                 (opc[i] != OIDLE && osend[i] >= ORD)))
#else
#define CHECK_OBS
#endif

hidden int rt;               /* real time, for the printed trace only: not part of the state */
hidden byte t1;
hidden byte tok;

#define NAME(i) ('A' + (i))
#define HNAME(h) ((h) == 0 -> '-' : 'A' + (h) - 1)
#define LDT(f) ((f) -> LD : REL_LD)
#define COARSE_OBS(i) (kind[i] == GO || COARSE_LH)
#ifdef COARSE
#define COARSE_LH 1
#else
#define COARSE_LH 0
#endif

/* LeaseValidLocked(t) for t = the attempt's start (TryAcquireOrRenew's `now`) or the present:
 * observed_time_ + the record's duration > t. Mutant 3: renewTime against the local wall clock. */
#if MUTANT == 3
#define VALID_AT_START(i) (avalid[i])
#define VALID_NOW(i) (orage[i] < 8 + LDT(old[i]))
#else
#define VALID_AT_START(i) (avalid[i])
#define VALID_NOW(i) (osince[i] < LDT(old[i]))
#endif

/* IsLeaderLocked(now), judged when the question is asked. Mutant 1: from the observed state
 * alone. A paused or crashed process answers nothing. */
#if MUTANT == 1
#define YES(i) (kind[i] == LH && !paused[i] && !dead[i] && !stopreq[i] && !relreq[i] && \
                phase[i] == LEAD && oh[i] == i + 1)
#else
#define YES(i) (kind[i] == LH && !paused[i] && !dead[i] && !stopreq[i] && !relreq[i] && \
                phase[i] == LEAD && oh[i] == i + 1 && claim[i] > 0)
#endif
/* the client-go peer's leadership as a lease can protect it: from its winning write's answer
 * until its last successful write was sent + renew-deadline */
#define GOLEAD(i) (kind[i] == GO && !dead[i] && phase[i] == LEAD && claim[i] > 0)
#define LEADS(i) (YES(i) || GOLEAD(i))
/* replica j's last validUntil given is still ahead */
#define BOUND(j) ((kind[j] == LH && !pvoid[j] && promised[j] > 0) || GOLEAD(j))

#if N == 2
#define P1 ((YES(0) && LEADS(1)) || (LEADS(0) && YES(1)))
#define P2 ((YES(0) && BOUND(1)) || (YES(1) && BOUND(0)))
#define PROMISES PROMISE(0); PROMISE(1)
#else
#define P1 ((YES(0) && LEADS(1)) || (LEADS(0) && YES(1)) || (YES(0) && LEADS(2)) || \
            (LEADS(0) && YES(2)) || (YES(1) && LEADS(2)) || (LEADS(1) && YES(2)))
#define P2 ((YES(0) && (BOUND(1) || BOUND(2))) || (YES(1) && (BOUND(0) || BOUND(2))) || \
            (YES(2) && (BOUND(0) || BOUND(1))))
#define PROMISES PROMISE(0); PROMISE(1); PROMISE(2)
#endif

/* Take(): the main container asks all the time, so every "yes" hands out validUntil =
 * claim_until_ and promised_until_ keeps the latest. */
#define PROMISE(i) if :: YES(i) && claim[i] > promised[i] -> promised[i] = claim[i] :: else fi
#define CHECK PROMISES; \
  if :: P1 -> printf("t=%d VIOLATION of P1: two replicas lead at once\n", rt) :: else fi; \
  assert(!P1); \
  if :: P2 -> printf("t=%d VIOLATION of P2: a yes while another replica's validUntil is ahead\n", rt) :: else fi; \
  assert(!P2) CHECK_OBS

/* a replica that must act before time may pass: a due step, a wake-up, a request at its deadline */
#define URG(i) (!paused[i] && !dead[i] && phase[i] != DONE && \
                ((pc[i] == IDLE && (woken[i] || nxt[i] == 0)) || (pc[i] != IDLE && qdl[i] == 0)))
#if N == 2 && defined(OBSERVE)
#define URGENT (URG(0) || URG(1) || OURG(0) || OURG(1))
#elif N == 2
#define URGENT (URG(0) || URG(1))
#elif defined(OBSERVE)
#define URGENT (URG(0) || URG(1) || URG(2) || OURG(0) || OURG(1) || OURG(2))
#else
#define URGENT (URG(0) || URG(1) || URG(2))
#endif

inline send(me, k) {
  pc[me] = k; qsince[me] = 0; qapp[me] = 0; qcur[me] = 0;
  qdl[me] = TREQ;
  if :: adl[me] < qdl[me] -> qdl[me] = adl[me] :: else fi;
  /* sent at its deadline: it can only time out */
  if :: qdl[me] == 0 -> qapp[me] = 3 :: else fi
}

inline clear_attempt(me) {
  pc[me] = IDLE; avalid[me] = 0; adl[me] = 0; awl[me] = 0; aheld[me] = 0; awrote[me] = 0;
  qsince[me] = 0; qdl[me] = 0; qapp[me] = 0; qcur[me] = 0;
#if USEWALL
  akeep[me] = 0; afresh[me] = 0;
#endif
}

/* SetObserved(record, raw, at) from the lock's current record (a Get's answer) */
inline observe_current(me, at) {
  obs[me] = 1; oh[me] = r_h; old[me] = r_ld; osince[me] = at; osame[me] = 1; EW(esame[me] = ecur[me]);
  if :: pc[me] != IDLE -> avalid[me] = 1 :: else fi
#if MUTANT == 3
  ; if :: rage + woff[me] + 8 >= woff[r_h - (r_h > 0)] + OCAP -> orage[me] = OCAP
       :: else -> orage[me] = rage + woff[me] + 8 - woff[r_h - (r_h > 0)] fi
#endif
}

/* a write changes the raw record unless it renews the holder's own record within the same wall
 * second: Go observers (and leasehold on annotation locks) compare whole seconds */
inline raw_changes(j, keep) {
  if
  :: kind[j] == LH && !COARSE_LH -> osame[j] = 0; EW(ecur[j] = 0)
  :: else -> skip; if :: !keep -> osame[j] = 0; EW(ecur[j] = 0) :: else fi
  fi
}

/* the watch queues an event for every leasehold replica; a pending older one is lost (with
 * STALE the new one may be lost instead, and the old one delivered late) */
inline queue_event(j) {
  if
  :: kind[j] == LH && WATCH && !dead[j] && phase[j] != DONE && phase[j] != HELDOFF ->
#ifdef STALE
     if
     :: true ->
#endif
        eset[j] = 1; EW(eh[j] = r_h); EW(eld[j] = r_ld); EW(ecur[j] = 1); EW(esame[j] = osame[j])
#if MUTANT == 3
        ; erage[j] = 0
#endif
#ifdef STALE
     :: eset[j] -> skip
     fi
#endif
  :: else
  fi
}

#ifdef OBSERVE
/* a write as observer j sees it: its key (KeyOf: whole seconds, as a Go elector compares) changes
 * exactly when a Go elector's raw does; the watch queues an event (with STALE the new one may be
 * lost while an older one is pending, which then arrives late) */
inline obs_write(j, keep) {
  if
  :: OBSRUN(j) ->
     if :: !keep -> okcur[j] = 0; rcur[j] = 0 :: else fi;
     if
     :: WATCH ->
#ifdef STALE
        if
        :: true ->
#endif
           oeset[j] = 1; oeme[j] = (r_h == j + 1)
#ifdef STALE
        :: oeset[j] -> skip
        fi
#endif
     :: else
     fi
  :: else
  fi
}
#endif

/* the API server applies replica me's Update: holder h, duration ld; keep: same raw as before */
inline write_record(me, h, ld, keep) {
  r_h = h; r_ld = ld; cur[0] = 0; cur[1] = 0; qcur[0] = 0; qcur[1] = 0;
  raw_changes(0, keep); raw_changes(1, keep);
#if N > 2
  cur[2] = 0; qcur[2] = 0; raw_changes(2, keep);
#endif
#if USEWALL
  r_w = me; r_fresh = afresh[me];
#endif
#if MUTANT == 3
  rage = 0;
#endif
  queue_event(0); queue_event(1);
#if N > 2
  queue_event(2);
#endif
#ifdef OBSERVE
  obs_write(0, keep); obs_write(1, keep);
#if N > 2
  obs_write(2, keep);
#endif
#endif
  qcur[me] = 1; awrote[me] = 1
}

/* TryAcquireOrRenew from the top: `now` and the wall stamp, then step 1 (fast path: we hold a
 * locally valid lease, PUT the cached object) or step 2 (Get). */
inline try_acquire_or_renew(me) {
  avalid[me] = VALID_NOW(me); awrote[me] = 0;
#if USEWALL
  akeep[me] = (r_h == me + 1 && r_w == me && r_fresh); afresh[me] = 1;
#endif
  if
  :: obs[me] && oh[me] == me + 1 && VALID_NOW(me) ->
     printf("t=%d %c: renew on the fast path: PUT sent\n", rt, NAME(me));
     send(me, FPUT)
  :: else ->
     printf("t=%d %c: GET sent\n", rt, NAME(me));
     send(me, GET)
  fi
}

/* StepCandidateOrLeader, up to the attempt */
inline step_candidate_or_leader(me) {
  if
  :: phase[me] == LEAD && claim[me] == 0 ->
     printf("t=%d %c: lost the lease: no renew succeeded within renew-deadline\n", rt, NAME(me));
     phase[me] = CAND
  :: else
  fi;
  awl[me] = (phase[me] == LEAD);
  if :: awl[me] -> adl[me] = claim[me] :: else -> adl[me] = RD fi;
#if RI > RP
  /* the cut: end early enough that one retry, RP later, still has ROOM before the claim ends */
  if :: awl[me] && claim[me] >= RP + 2 * ROOM -> adl[me] = claim[me] - RP - ROOM :: else fi;
#endif
  try_acquire_or_renew(me)
}

/* StepCandidateOrLeader after TryAcquireOrRenew returned `ok` */
inline finish_attempt(me, ok) {
  if
  :: ok ->
     if
     :: !awl[me] -> phase[me] = LEAD;
        printf("t=%d %c: ACQUIRED the lease; answers yes for %d ticks of its clock\n", rt, NAME(me), claim[me])
     :: else -> printf("t=%d %c: renewed; answers yes for %d ticks of its clock\n", rt, NAME(me), claim[me])
     fi;
     nxt[me] = RI
  :: else ->
     if
     :: awl[me] && oh[me] != me + 1 -> phase[me] = CAND; claim[me] = 0;
        printf("t=%d %c: lost the lease to %c\n", rt, NAME(me), HNAME(oh[me]))
     :: else
     fi;
     if
     :: phase[me] == LEAD -> nxt[me] = RP; if :: claim[me] < nxt[me] -> nxt[me] = claim[me] :: else fi
     :: else ->  /* retry-period x (1 + rand x 1.2), in whole ticks */
        JITTER(nxt[me])
     fi
  fi;
  clear_attempt(me)
}

/* Release(deadline): Get; only if we still hold the lock, PUT the released record */
inline start_release(me, held) {
  aheld[me] = held; adl[me] = RD;
  printf("t=%d %c: release: GET sent\n", rt, NAME(me));
  send(me, RGET)
}

/* a replica out of the election for good: only its promises still count */
inline retire(me) {
  claim[me] = 0; nxt[me] = NEVER; obs[me] = 0; oh[me] = 0; old[me] = 0; osince[me] = 0;
  osame[me] = 0; cur[me] = 0; woken[me] = 0; checknow[me] = 0; pdl[me] = 0;
  eset[me] = 0; EW(eh[me] = 0); EW(eld[me] = 0); EW(esame[me] = 0); EW(ecur[me] = 0);
#if USEWALL
  wph[me] = 0;
#endif
}

inline release_done(me) {
  if
  :: aheld[me] -> relreq[me] = 0; phase[me] = HELDOFF  /* the hold-off outlasts any run */
  :: else -> phase[me] = DONE
  fi;
  clear_attempt(me); retire(me)
}

/* Step(): StepStopping, StepHeldOff or StepCandidateOrLeader */
inline step(me) {
  if
  :: stopreq[me] ->
     phase[me] = STOPPING;
     if
     :: obs[me] && oh[me] == me + 1 ->
        if
#if MUTANT != 4
        :: safe_mode[me] && !relreq[me] && promised[me] > 0 ->
           nxt[me] = promised[me];
           printf("t=%d %c: stopping (safe): waits %d ticks for the last validUntil\n", rt, NAME(me), promised[me])
#endif
        :: else -> start_release(me, 0)
        fi
     :: else -> phase[me] = DONE; retire(me)
     fi
  :: !stopreq[me] && (relreq[me] || phase[me] == HELDOFF) ->
     if
     :: relreq[me] && obs[me] && oh[me] == me + 1 -> start_release(me, 1)
     :: relreq[me] && !(obs[me] && oh[me] == me + 1) ->
        relreq[me] = 0; phase[me] = HELDOFF; retire(me)
     :: else -> nxt[me] = NEVER
     fi
  :: else -> step_candidate_or_leader(me)
  fi
}

proctype Leasehold(byte me) {
end:
  do
  /* Run(): a wake-up re-decides what is due (stop/release at once, a leader that saw a foreign
   * event at once, a candidate per CandidateDueLocked); then Step() when due */
  :: atomic { pc[me] == IDLE && !paused[me] && !dead[me] && phase[me] != DONE &&
              (woken[me] || nxt[me] == 0) ->
       if
       :: woken[me] -> woken[me] = 0;
          if
          :: stopreq[me] || relreq[me] -> nxt[me] = 0
          :: !(stopreq[me] || relreq[me]) && phase[me] == LEAD && checknow[me] -> checknow[me] = 0; nxt[me] = 0
          :: !(stopreq[me] || relreq[me]) && phase[me] == CAND ->
             if
             :: !obs[me] || oh[me] == 0 || oh[me] == me + 1 || !VALID_NOW(me) -> nxt[me] = 0
             :: else -> skip; if :: osince[me] < LDT(old[me]) -> nxt[me] = LDT(old[me]) - osince[me] :: else -> nxt[me] = 0 fi
             fi
          :: else
          fi
       :: else
       fi;
       if :: nxt[me] == 0 -> step(me) :: else fi;
       CHECK }

  /* the API server applies an Update as a compare-and-set on the cached resourceVersion
   * (mutant 6: unconditionally), at any time before the client's deadline, even while the
   * client is paused or has crashed */
  :: atomic { (pc[me] == FPUT || pc[me] == PUT || pc[me] == RPUT) && qapp[me] == 0 ->
       if
#if MUTANT == 6
       :: true ->
#else
       :: cur[me] ->
#endif
#if USEWALL && FIX2
          t1 = (pc[me] != RPUT && r_h == me + 1 && akeep[me]);
#elif USEWALL
          t1 = (pc[me] != RPUT && r_h == me + 1 && (awrote[me] || akeep[me]));
#else
          t1 = 0;
#endif
          if
          :: pc[me] == RPUT -> write_record(me, 0, 0, 0)
          :: else -> write_record(me, me + 1, 1, t1)
          fi;
          qapp[me] = 1;
          printf("t=%d    server: %c's PUT applied; holder now %c\n", rt, NAME(me), HNAME(r_h));
          if :: t1 -> printf("t=%d    (same holder, term and renewTime second: the raw record did not change)\n", rt) :: else fi
       :: else -> qapp[me] = 2;
          printf("t=%d    server: %c's PUT rejected: Conflict (stale resourceVersion)\n", rt, NAME(me))
       fi;
       CHECK }

  /* an Update's answer (OK or Conflict), an error answer without effect (5xx), or none by the
   * deadline (DeadlineExceeded, though the PUT may have been applied) */
  :: atomic { (pc[me] == FPUT || pc[me] == PUT || pc[me] == RPUT) && !paused[me] && !dead[me] &&
              (qapp[me] == 1 || qapp[me] == 2 || qdl[me] == 0 || (ERRS && pc[me] == FPUT)) ->
       if
       :: qapp[me] == 1 -> tok = 1; cur[me] = qcur[me];
          printf("t=%d %c: PUT answered OK\n", rt, NAME(me))
       :: qapp[me] == 2 -> tok = 0; printf("t=%d %c: PUT answered Conflict\n", rt, NAME(me))
       :: qapp[me] == 0 && qdl[me] > 0 && ERRS && pc[me] == FPUT -> tok = 0;
          printf("t=%d %c: PUT answered with an error (not applied)\n", rt, NAME(me))
       :: qdl[me] == 0 -> tok = 0;
          printf("t=%d %c: PUT timed out (applied: %d)\n", rt, NAME(me), qapp[me] == 1)
       fi;
       if
       :: pc[me] == RPUT ->  /* Release */
          if
          :: tok -> obs[me] = 1; oh[me] = 0; old[me] = 0; osince[me] = 0; osame[me] = 0; EW(esame[me] = 0);
             printf("t=%d %c: released the lease\n", rt, NAME(me));
             release_done(me)
          :: !tok && qapp[me] == 2 && adl[me] > 0 -> send(me, RGET)
          :: else -> release_done(me)
          fi
       :: pc[me] != RPUT && tok ->  /* success: WriteSucceededLocked (SetObserved, the claim) */
          obs[me] = 1; oh[me] = me + 1; old[me] = 1; osince[me] = 0;
#if MUTANT == 3
          orage[me] = 8 + woff[me] - woff[me];
#endif
#if MUTANT == 5
          t1 = LD;                        /* the "yes" window = lease-duration */
#else
          t1 = RD;                        /* claim_until_ = sent + renew-deadline */
#endif
          if :: qsince[me] < t1 -> claim[me] = t1 - qsince[me] :: else -> claim[me] = 0 fi;
          finish_attempt(me, 1)
       :: pc[me] == FPUT && !tok ->
          printf("t=%d %c: fast path failed; GET sent\n", rt, NAME(me));
          send(me, GET)
       :: pc[me] == PUT && !tok -> finish_attempt(me, 0)
       fi;
       CHECK }

  /* a Get's answer: the record as it is when the answer leaves the server; or an error, or no
   * answer by the deadline */
  :: atomic { (pc[me] == GET || pc[me] == RGET) && !paused[me] && !dead[me] ->
       if
       :: qapp[me] == 0 -> cur[me] = 1;
          printf("t=%d %c: GET returns holder=%c\n", rt, NAME(me), HNAME(r_h));
          if
          :: pc[me] == RGET ->
             if
             :: r_h == me + 1 -> printf("t=%d %c: release: PUT sent\n", rt, NAME(me)); send(me, RPUT)
             :: else -> release_done(me)
             fi
          :: else ->
             /* step 3: only a changed raw restarts the expiry timer, stamped when the Get
              * returned (mutant 2: when it was sent) */
             if
             :: !obs[me] || !osame[me] || (FIX1 && oh[me] != r_h) ->
#if MUTANT == 2
                observe_current(me, qsince[me])
#else
                observe_current(me, 0)
#endif
             :: else -> printf("t=%d %c: raw record unchanged: the expiry timer keeps running\n", rt, NAME(me))
             fi;
             if
             :: r_h != 0 && r_h != me + 1 && VALID_AT_START(me) ->
                printf("t=%d %c: held by %c, not expired\n", rt, NAME(me), HNAME(r_h));
                finish_attempt(me, 0)
             :: else ->
#if USEWALL && FIX2
                /* renewTime (and a takeover's acquireTime) stamped now, as the Update is sent */
                akeep[me] = (r_h == me + 1 && r_w == me && r_fresh); afresh[me] = 1;
#endif
                printf("t=%d %c: PUT sent (holder %c)\n", rt, NAME(me), NAME(me));
                send(me, PUT)
             fi
          fi
       :: qdl[me] == 0 -> printf("t=%d %c: GET timed out\n", rt, NAME(me));
          if :: pc[me] == RGET -> release_done(me) :: else -> finish_attempt(me, 0) fi
       fi;
       CHECK }

  /* Observe(): a watch event. A leader ignores its own records and renews at once on a foreign
   * one; anyone else ignores an event naming itself (FIX3) and takes a changed raw (or holder:
   * FIX1) as a new observation, stamped now. */
  :: atomic { eset[me] && !paused[me] && !dead[me] ->
       if
       :: phase[me] == LEAD && EH(me) == me + 1 -> skip
#if FIX3
       :: phase[me] != LEAD && EH(me) == me + 1 -> skip
       :: phase[me] != LEAD && EH(me) != me + 1 && obs[me] && ESAME(me) && (!FIX1 || oh[me] == EH(me)) -> skip
#else
       :: phase[me] != LEAD && obs[me] && ESAME(me) && (!FIX1 || oh[me] == EH(me)) -> skip
#endif
       :: else ->
          if :: phase[me] == LEAD -> checknow[me] = 1 :: else fi;
          obs[me] = 1; oh[me] = EH(me); old[me] = ELD(me); osince[me] = 0; osame[me] = ECUR(me); EW(esame[me] = 1);
          if :: pc[me] != IDLE -> avalid[me] = 1 :: else fi;
#if MUTANT == 3
          orage[me] = erage[me];
#endif
          woken[me] = 1;
          printf("t=%d %c: watch event: holder=%c\n", rt, NAME(me), HNAME(EH(me)))
       fi;
       eset[me] = 0; EW(eh[me] = 0); EW(eld[me] = 0); EW(esame[me] = 0); EW(ecur[me] = 0);
#if MUTANT == 3
       erage[me] = 0;
#endif
       CHECK }

  /* the world, at most once each per run: SIGSTOP (and SIGCONT), a crash, SIGTERM (Stop) with
   * release safe or immediate, POST /release (AcknowledgeRelease) */
  :: atomic { pause_left && !dead[me] && phase[me] != DONE -> pause_left = 0; paused[me] = 1;
       printf("t=%d %c: PAUSED (SIGSTOP)\n", rt, NAME(me)); CHECK }
  :: atomic { paused[me] -> paused[me] = 0; printf("t=%d %c: resumed (SIGCONT)\n", rt, NAME(me)); CHECK }
  :: atomic { crash_left && !dead[me] && phase[me] != DONE -> crash_left = 0; dead[me] = 1;
       printf("t=%d %c: CRASHED\n", rt, NAME(me));
       paused[me] = 0; stopreq[me] = 0; relreq[me] = 0; phase[me] = CAND; retire(me);
       avalid[me] = 0; adl[me] = 0; awl[me] = 0; aheld[me] = 0; qsince[me] = 0; qdl[me] = 0;
       if :: !((pc[me] == FPUT || pc[me] == PUT || pc[me] == RPUT) && qapp[me] == 0) -> clear_attempt(me) :: else fi;
       CHECK }
  :: atomic { stop_left && !dead[me] && !paused[me] && phase[me] != DONE && !stopreq[me] ->
       stop_left = 0; stopreq[me] = 1; woken[me] = 1;
       if
       :: safe_mode[me] = 1; printf("t=%d %c: SIGTERM (release safe)\n", rt, NAME(me))
       :: pvoid[me] = 1; printf("t=%d %c: SIGTERM (release immediate: the main container has stopped)\n", rt, NAME(me))
       fi;
       CHECK }
  :: atomic { ((stop_left && !stopreq[me]) || (ack_left && stopreq[me] && safe_mode[me])) && !relreq[me] &&
              !dead[me] && !paused[me] && phase[me] != DONE ->
       if :: stopreq[me] -> ack_left = 0 :: else -> stop_left = 0 fi; relreq[me] = 1;
       woken[me] = 1; pvoid[me] = 1;
       printf("t=%d %c: POST /release (the main container has stopped)\n", rt, NAME(me)); CHECK }
  od
}

#ifdef GOPEER
/* client-go's tryAcquireOrRenew, acquire() (every RP x (1 + rand x 1.2)) and renew() (polls every
 * RP, gives up RD after the poll began); whole-second raws; no watch; ReleaseOnCancel off. */
inline go_failed(me) {
  clear_attempt(me);
  if
  :: phase[me] == LEAD && pdl[me] == 0 -> phase[me] = DONE; retire(me);
     printf("t=%d %c: (client-go) failed to renew; stopped leading\n", rt, NAME(me))
  :: phase[me] == LEAD && pdl[me] > 0 -> nxt[me] = RP; if :: pdl[me] < nxt[me] -> nxt[me] = pdl[me] :: else fi
  :: phase[me] != LEAD -> JITTER(nxt[me])
  fi
}

proctype GoPeer(byte me) {
end:
  do
  :: atomic { pc[me] == IDLE && !paused[me] && !dead[me] && phase[me] != DONE && nxt[me] == 0 ->
       awl[me] = (phase[me] == LEAD);
       if
       :: awl[me] -> if :: pdl[me] == 0 -> pdl[me] = RD :: else fi; adl[me] = pdl[me]
       :: else -> adl[me] = NEVER
       fi;
       try_acquire_or_renew(me);
       CHECK }
  :: atomic { (pc[me] == FPUT || pc[me] == PUT) && qapp[me] == 0 ->
       if
       :: cur[me] ->
          t1 = (r_h == me + 1 && (awrote[me] || akeep[me]));
          write_record(me, me + 1, 1, t1); qapp[me] = 1;
          printf("t=%d    server: %c's PUT applied; holder now %c\n", rt, NAME(me), NAME(me))
       :: else -> qapp[me] = 2; printf("t=%d    server: %c's PUT rejected: Conflict\n", rt, NAME(me))
       fi;
       CHECK }
  :: atomic { (pc[me] == FPUT || pc[me] == PUT) && !paused[me] && !dead[me] &&
              (qapp[me] == 1 || qapp[me] == 2 || qdl[me] == 0 || (ERRS && pc[me] == FPUT)) ->
       if
       :: qapp[me] == 1 -> tok = 1; cur[me] = qcur[me]
       :: qapp[me] == 2 || (qapp[me] == 0 && ERRS && pc[me] == FPUT && qdl[me] > 0) -> tok = 0
       :: qdl[me] == 0 -> tok = 0
       fi;
       printf("t=%d %c: PUT answered (ok: %d)\n", rt, NAME(me), tok);
       if
       :: tok ->  /* setObservedRecord(&rec): observedTime = now; the raw stays */
          obs[me] = 1; oh[me] = me + 1; old[me] = 1; osince[me] = 0;
          if :: qsince[me] < RD -> claim[me] = RD - qsince[me] :: else -> claim[me] = 0 fi;
          if
          :: !awl[me] -> phase[me] = LEAD; printf("t=%d %c: (client-go) became leader\n", rt, NAME(me))
          :: else
          fi;
          pdl[me] = 0; clear_attempt(me); nxt[me] = RP
       :: !tok && pc[me] == FPUT -> send(me, GET)
       :: else -> go_failed(me)
       fi;
       CHECK }
  :: atomic { pc[me] == GET && !paused[me] && !dead[me] ->
       if
       :: qapp[me] == 0 -> cur[me] = 1;
          printf("t=%d %c: GET returns holder=%c\n", rt, NAME(me), HNAME(r_h));
          if
          :: !obs[me] || !osame[me] -> observe_current(me, 0)
          :: else -> printf("t=%d %c: record unchanged to the second: observedTime stays\n", rt, NAME(me))
          fi;
          if
          :: r_h != 0 && r_h != me + 1 && VALID_AT_START(me) -> go_failed(me)
          :: else -> send(me, PUT)
          fi
       :: qdl[me] == 0 -> go_failed(me)
       fi;
       CHECK }
  :: atomic { pause_left && !dead[me] && phase[me] != DONE -> pause_left = 0; paused[me] = 1;
       printf("t=%d %c: PAUSED (SIGSTOP)\n", rt, NAME(me)); CHECK }
  :: atomic { paused[me] -> paused[me] = 0; printf("t=%d %c: resumed (SIGCONT)\n", rt, NAME(me)); CHECK }
  :: atomic { crash_left && !dead[me] && phase[me] != DONE -> crash_left = 0; dead[me] = 1;
       printf("t=%d %c: CRASHED\n", rt, NAME(me));
       paused[me] = 0; stopreq[me] = 0; relreq[me] = 0; phase[me] = CAND; retire(me);
       avalid[me] = 0; adl[me] = 0; awl[me] = 0; aheld[me] = 0; qsince[me] = 0; qdl[me] = 0;
       if :: !((pc[me] == FPUT || pc[me] == PUT || pc[me] == RPUT) && qapp[me] == 0) -> clear_attempt(me) :: else fi;
       CHECK }
  od
}
#endif

#ifdef OBSERVE
/* the API server reads the record for observer me's Get */
inline obs_read(me) {
  opc[me] = OREAD; rme[me] = (r_h == me + 1); rsame[me] = (oobs[me] && okcur[me]); rcur[me] = 1;
  printf("t=%d    server: reads holder=%c for %c'\n", rt, HNAME(r_h), NAME(me))
}

/* Observer (src/election/observer.cpp): Run() and Step(), one Get at a time, and Observe() for
 * watch events. It never writes. Its "yes" is OYES. */
proctype Observer(byte me) {
end:
  do
  /* Run(): a Get is due retry-period after the last one was sent, or at once after an event */
  :: atomic { opc[me] == OIDLE && !opaused[me] && (owoken[me] || osend[me] >= ORP) ->
       owoken[me] = 0; osend[me] = 0; oafter[me] = 1; opc[me] = OGET;
       printf("t=%d %c': GET sent\n", rt, NAME(me));
#ifndef OREADANY
       obs_read(me);
#endif
       CHECK }
  /* OREADANY: the API server reads the record at any instant before the Get's deadline (send +
   * renew-deadline), even while the observer is paused. By default it reads at the send, the
   * worst case (model/README.md). The answer comes at any instant after the read, before the
   * deadline, or after it if the observer was stalled in between. */
#ifdef OREADANY
  :: atomic { opc[me] == OGET && osend[me] < ORD -> obs_read(me); CHECK }
#endif
  /* Step(): the Get's answer. A key other than last_key_ makes last_send_ the evidence S: the
   * new version was first written after S. Mutant 8: S = the last Get's answer instead; mutant
   * 9: S = this Get's send. The first answer gives no evidence. */
  :: atomic { opc[me] == OREAD && !opaused[me] ->
       if
       :: !oobs[me] -> oclaim[me] = 0
       :: oobs[me] && !rsame[me] ->
#if MUTANT == 9
          if :: osend[me] < OSPAN -> oclaim[me] = OSPAN - osend[me] :: else -> oclaim[me] = 0 fi
#else
          oclaim[me] = OSPAN - oev[me]
#endif
       :: else
       fi;
#if MUTANT == 8
       oev[me] = 0;
#else
       oev[me] = osend[me];
#endif
       oobs[me] = 1; okcur[me] = rcur[me]; ome[me] = rme[me];
       /* evidence_ stays, but while the last Get names another holder it decides nothing: the
        * next Get that names this pod reads another version and sets it anew */
       if :: !ome[me] -> oclaim[me] = 0 :: else fi;
       if :: oveto[me] && oafter[me] -> oveto[me] = 0 :: else fi;
       opc[me] = OIDLE; oafter[me] = 0; rme[me] = 0; rsame[me] = 0; rcur[me] = 0;
       if
       :: OYES(me) -> printf("t=%d %c': GET answered: holder is this pod; YES for %d ticks\n", rt, NAME(me), oclaim[me])
       :: else -> printf("t=%d %c': GET answered: holder is this pod: %d; no\n", rt, NAME(me), ome[me])
       fi;
       CHECK }
  /* a Get not answered by its deadline says nothing and moves nothing (read or not) */
  :: atomic { opc[me] != OIDLE && osend[me] >= ORD && !opaused[me] ->
       opc[me] = OIDLE; oafter[me] = 0;
       printf("t=%d %c': GET timed out\n", rt, NAME(me));
       CHECK }
  /* Observe(): an event naming another holder says "no" until a Get sent after it answers; any
   * event makes the next Get due at once */
  :: atomic { oeset[me] ->
       if :: !oeme[me] -> oveto[me] = 1; oafter[me] = 0 :: else fi;
       owoken[me] = 1;
       printf("t=%d %c': watch event: names this pod: %d (if not: veto)\n", rt, NAME(me), oeme[me]);
       oeset[me] = 0; oeme[me] = 0;
       CHECK }
  /* the observer's loop stalls (SIGSTOP, or a descheduled thread) for any time; its answers
   * still count */
  :: atomic { opause_left && !opaused[me] -> opause_left = 0; opaused[me] = 1;
       printf("t=%d %c': PAUSED\n", rt, NAME(me)); CHECK }
  :: atomic { opaused[me] -> opaused[me] = 0; printf("t=%d %c': resumed\n", rt, NAME(me)); CHECK }
  od
}
#endif

/* one tick of replica i's monotonic clock (inc = 0, 1 or 2 for real 1) and of its wall clock */
#define DEC(x, d) if :: x != NEVER && x > d -> x = x - d :: x != NEVER && x <= d -> x = 0 :: else fi
#define INC(x, d) if :: x + d < CAP -> x = x + d :: else -> x = CAP fi
inline tick(i, d) {
  DEC(promised[i], d);
#ifdef OBSERVE
  /* observer i runs in pod i, on the same node's clock as manager i */
  if
  :: OBSRUN(i) ->
     if :: osend[i] + d < OSCAP -> osend[i] = osend[i] + d :: else -> osend[i] = OSCAP fi;
     if :: oev[i] + d < OSPAN -> oev[i] = oev[i] + d :: else -> oev[i] = OSPAN fi;
     DEC(oclaim[i], d)
  :: else
  fi;
#endif
  if
  :: dead[i] || phase[i] == DONE || phase[i] == HELDOFF ->
#if USEWALL
     if
     :: pc[i] != IDLE -> wph[i] = (wph[i] + 1) % SEC;
        if :: wph[i] == 0 -> afresh[i] = 0; if :: r_w == i -> r_fresh = 0 :: else fi :: else fi
     :: else
     fi;
#endif
     skip
  :: else -> skip; tick_live(i, d)
  fi
}
inline tick_live(i, d) {
  DEC(nxt[i], d); DEC(claim[i], d); DEC(adl[i], d); DEC(qdl[i], d); DEC(pdl[i], d);
  INC(osince[i], d);
  if :: pc[i] != IDLE -> INC(qsince[i], d) :: else fi;
#if USEWALL
  wph[i] = (wph[i] + 1) % SEC;
  if :: wph[i] == 0 -> afresh[i] = 0; if :: r_w == i -> r_fresh = 0 :: else fi :: else fi;
#endif
#if MUTANT == 3
  if :: orage[i] < OCAP -> orage[i]++ :: else fi;
  if :: eset[i] && erage[i] < OCAP -> erage[i]++ :: else fi;
#endif
}

#if N == 2
#define TICKALL(d0, d1) tick(0, d0); tick(1, d1)
#else
#define TICKALL(d0, d1, d2) tick(0, d0); tick(1, d1); tick(2, d2)
#endif

/* real time: a tick passes once no replica must act first */
active proctype Time() {
  atomic {
    kind[0] = LH; kind[1] = LH;
#if N > 2
    kind[2] = LH;
#endif
#ifdef OBSERVE
    kind[0] = GO; kind[1] = GO; osend[0] = OSCAP; osend[1] = OSCAP;
#if N > 2
    kind[2] = GO; osend[2] = OSCAP;
#endif
#elif defined(GOPEER)
    kind[N - 1] = GO;
#endif
#if USEWALL
    /* where each wall clock stands within its second */
    if :: wph[1] = 0 :: wph[1] = 1 :: wph[1] = 2 :: wph[1] = 3 fi;
#if N > 2
    if :: wph[2] = 0 :: wph[2] = 1 :: wph[2] = 2 :: wph[2] = 3 fi;
#endif
#endif
#if MUTANT == 3
    if :: woff[1] = 0 :: woff[1] = 1 :: woff[1] = 2 :: woff[1] = 3 fi;
#endif
#ifdef OBSERVE
    run GoPeer(0); run GoPeer(1); run Observer(0);
#ifdef OBSALL
    run Observer(1);
#endif
#if N > 2
    run GoPeer(2);
#ifdef OBSALL
    run Observer(2);
#endif
#endif
#elif defined(GOPEER)
    run Leasehold(0);
#if N > 2
    run Leasehold(1);
#endif
    run GoPeer(N - 1);
#else
    run Leasehold(0);
    run Leasehold(1);
#if N > 2
    run Leasehold(2);
#endif
#endif
  }
end:
  do
  :: atomic { !URGENT ->
       rt++;
       if
       :: true ->
#if N == 2
          TICKALL(1, 1)
#else
          TICKALL(1, 1, 1)
#endif
#ifndef NODRIFT
       :: DRIFT_OK ->
          DRIFT_USE;
          if
#if N == 2
          :: true -> TICKALL(0, 1); printf("t=%d    A's clock stands still for this tick\n", rt)
          :: true -> TICKALL(2, 1); printf("t=%d    A's clock jumps a tick\n", rt)
          :: true -> TICKALL(1, 0); printf("t=%d    B's clock stands still for this tick\n", rt)
          :: true -> TICKALL(1, 2); printf("t=%d    B's clock jumps a tick\n", rt)
#else
          :: true -> TICKALL(0, 1, 1); printf("t=%d    A's clock stands still for this tick\n", rt)
          :: true -> TICKALL(2, 1, 1); printf("t=%d    A's clock jumps a tick\n", rt)
          :: true -> TICKALL(1, 0, 1); printf("t=%d    B's clock stands still for this tick\n", rt)
          :: true -> TICKALL(1, 2, 1); printf("t=%d    B's clock jumps a tick\n", rt)
          :: true -> TICKALL(1, 1, 0); printf("t=%d    C's clock stands still for this tick\n", rt)
          :: true -> TICKALL(1, 1, 2); printf("t=%d    C's clock jumps a tick\n", rt)
#endif
          fi
#endif
       fi;
#if MUTANT == 3
       if :: rage < OCAP -> rage++ :: else fi;
#endif
       CHECK }
#if MUTANT == 3
  /* a wall clock steps forward */
  :: atomic { wstep_left -> wstep_left = 0;
       if
       :: t1 = 0 :: t1 = 1
       fi;
       woff[t1] = woff[t1] + WSTEP;
       orage[t1] = orage[t1] + WSTEP; if :: orage[t1] > OCAP -> orage[t1] = OCAP :: else fi;
       printf("t=%d    %c's wall clock steps %d ticks forward\n", rt, NAME(t1), WSTEP);
       CHECK }
#endif
  od
}
