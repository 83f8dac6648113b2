/* The legal-move generator of engine/moves.py in C: the same rules, the same canonical moves, the same order.
 *
 * engine/moves.py calls setup(Position, Move, Play, InvalidPositionError) once, then legal_plays(pos, d1, d2)
 * with dice already checked. The search works on plain byte boards; Python objects are made only for the
 * final plays, straight into the classes' slots (the Python constructors validate, which the generator's
 * outputs do not need), and the opponent's tuple of the starting position is shared by every play that hits
 * nothing. Position's cached hash equals Position._trusted's hash((me, opp)), computed from the counts with
 * CPython's tuple-hash formula where setup() finds that formula in force, else with PyObject_Hash.
 * Measured (bench/movegen.py): about 6.5 µs per non-double list against 150 µs in pure Python.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#define CHEQUERS 15
#define BAR 25
#define MAX_STEPS 4

/* Cells in the mover's numbering: me[1..24] points, me[25] bar (me[0] unused); them[p] = opponent's chequers
 * on my point p (1..24), them[25] = their bar. */
typedef struct {
    uint8_t me[26];
    uint8_t them[26];
    uint8_t zero[4]; /* always 0: pads the board to 7 words for board_hash */
} Board;

_Static_assert(sizeof(Board) % 8 == 0, "board_hash reads whole words");

typedef struct {
    Board board;
    uint64_t rank;  /* top die << 40 | canon: the Python generator's (top_die, canonical steps) order */
    uint64_t canon; /* steps in descending order, 10 bits each, first step highest */
    uint8_t nsteps;
    uint8_t keep;
    uint8_t top;
    uint8_t steps[MAX_STEPS][2];
} Result;

#define LOCAL_RESULTS 128
#define LOCAL_SLOTS 256

/* The distinct positions found so far, for the largest number of dice used so far. */
typedef struct {
    Result *items;
    size_t n, cap;
    int32_t *slots; /* open addressing on the board, index into items or -1 */
    size_t nslots;
    int best_used;
    int failed;
    Result local_items[LOCAL_RESULTS];
    int32_t local_slots[LOCAL_SLOTS];
} Found;

static void found_init(Found *f) {
    f->items = f->local_items;
    f->n = 0;
    f->cap = LOCAL_RESULTS;
    f->slots = f->local_slots;
    f->nslots = LOCAL_SLOTS;
    memset(f->slots, 0xff, sizeof(int32_t) * f->nslots);
    f->best_used = 0;
    f->failed = 0;
}

static void found_free(Found *f) {
    if (f->items != f->local_items)
        PyMem_Free(f->items);
    if (f->slots != f->local_slots)
        PyMem_Free(f->slots);
}

static inline uint64_t board_hash(const Board *b) {
    uint64_t words[sizeof(Board) / 8], h = 0;
    memcpy(words, b, sizeof(words));
    for (size_t i = 0; i < sizeof(Board) / 8; i++)
        h = (h ^ words[i]) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 31);
}

static int found_grow(Found *f) {
    size_t cap = f->cap * 2;
    Result *items = PyMem_Malloc(cap * sizeof(Result));
    size_t nslots = f->nslots * 2;
    int32_t *slots = PyMem_Malloc(nslots * sizeof(int32_t));
    if (!items || !slots) {
        PyMem_Free(items);
        PyMem_Free(slots);
        return -1;
    }
    memcpy(items, f->items, f->n * sizeof(Result));
    memset(slots, 0xff, nslots * sizeof(int32_t));
    for (size_t i = 0; i < f->n; i++) {
        size_t j = board_hash(&items[i].board) & (nslots - 1);
        while (slots[j] >= 0)
            j = (j + 1) & (nslots - 1);
        slots[j] = (int32_t)i;
    }
    found_free(f);
    f->items = items;
    f->cap = cap;
    f->slots = slots;
    f->nslots = nslots;
    return 0;
}

/* Keep (board, steps) if it uses as many dice as the best so far; among step lists reaching one board keep the
 * greatest (top die, canonical steps), as the Python generator does. */
static void record(Found *f, const Board *b, const uint8_t steps[][2], int nsteps, int top) {
    if (f->failed || nsteps < f->best_used)
        return;
    if (nsteps > f->best_used) {
        f->best_used = nsteps;
        f->n = 0;
        memset(f->slots, 0xff, sizeof(int32_t) * f->nslots);
    }
    uint8_t sorted[MAX_STEPS][2] = {{0}};
    memcpy(sorted, steps, sizeof(uint8_t) * 2 * (size_t)nsteps);
    for (int i = 1; i < nsteps; i++) { /* insertion sort, descending by (from, to) */
        for (int j = i; j > 0 && (sorted[j][0] > sorted[j - 1][0] ||
                                  (sorted[j][0] == sorted[j - 1][0] && sorted[j][1] > sorted[j - 1][1]));
             j--) {
            uint8_t s0 = sorted[j][0], s1 = sorted[j][1];
            sorted[j][0] = sorted[j - 1][0];
            sorted[j][1] = sorted[j - 1][1];
            sorted[j - 1][0] = s0;
            sorted[j - 1][1] = s1;
        }
    }
    uint64_t canon = 0;
    for (int i = 0; i < MAX_STEPS; i++)
        canon = canon << 10 | (i < nsteps ? (uint64_t)(sorted[i][0] << 5 | sorted[i][1]) + 1 : 0);
    uint64_t rank = (uint64_t)top << 40 | canon;

    size_t j = board_hash(b) & (f->nslots - 1);
    for (; f->slots[j] >= 0; j = (j + 1) & (f->nslots - 1)) {
        Result *r = &f->items[f->slots[j]];
        if (memcmp(&r->board, b, sizeof(Board)) == 0) {
            if (rank > r->rank) {
                r->rank = rank;
                r->canon = canon;
                r->top = (uint8_t)top;
                memcpy(r->steps, sorted, sizeof(sorted));
            }
            return;
        }
    }
    if (f->n * 2 >= f->nslots || f->n == f->cap) {
        if (found_grow(f) < 0) {
            f->failed = 1;
            return;
        }
        j = board_hash(b) & (f->nslots - 1);
        while (f->slots[j] >= 0)
            j = (j + 1) & (f->nslots - 1);
    }
    Result *r = &f->items[f->n];
    r->board = *b;
    r->rank = rank;
    r->canon = canon;
    r->nsteps = (uint8_t)nsteps;
    r->top = (uint8_t)top;
    r->keep = 1;
    memcpy(r->steps, sorted, sizeof(sorted));
    f->slots[j] = (int32_t)f->n++;
}

/* Destination of a chequer moved from src with die, or -1 when that step is not legal. */
static inline int step_dest(const Board *b, int src, int die) {
    if (!b->me[src] || (b->me[BAR] && src != BAR))
        return -1;
    int dst = src - die;
    if (dst > 0)
        return b->them[dst] >= 2 ? -1 : dst;
    for (int p = 7; p <= BAR; p++) /* bearing off: every chequer home */
        if (b->me[p])
            return -1;
    if (dst == 0)
        return 0;
    for (int p = src + 1; p <= 6; p++) /* a larger die bears off from the highest point only */
        if (b->me[p])
            return -1;
    return 0;
}

static inline void apply_step(Board *b, int src, int dst) {
    b->me[src]--;
    b->me[dst]++;
    if (dst && b->them[dst] == 1) {
        b->them[dst] = 0;
        b->them[BAR]++;
    }
}

/* Points a chequer may leave, highest first: only the bar while a chequer is on it. */
static inline int sources(const Board *b, int out[25]) {
    if (b->me[BAR]) {
        out[0] = BAR;
        return 1;
    }
    int n = 0;
    for (int p = 24; p >= 1; p--)
        if (b->me[p])
            out[n++] = p;
    return n;
}

/* Doubles: chequers move in non-increasing order of their source, which reaches every position once. */
static void gen_double(Found *f, const Board *b, uint8_t steps[][2], int nsteps, int max_src, int die) {
    int moved = 0;
    if (nsteps < MAX_STEPS) {
        int src[25];
        int ns = sources(b, src);
        for (int i = 0; i < ns; i++) {
            if (src[i] > max_src)
                continue;
            int dst = step_dest(b, src[i], die);
            if (dst < 0)
                continue;
            moved = 1;
            Board b2 = *b;
            apply_step(&b2, src[i], dst);
            steps[nsteps][0] = (uint8_t)src[i];
            steps[nsteps][1] = (uint8_t)dst;
            gen_double(f, &b2, steps, nsteps + 1, src[i], die);
        }
    }
    if (!moved)
        record(f, b, (const uint8_t(*)[2])steps, nsteps, die);
}

static void gen_non_double(Found *f, const Board *b, int d1, int d2) {
    uint8_t steps[2][2];
    for (int order = 0; order < 2; order++) {
        int first = order ? d2 : d1, second = order ? d1 : d2;
        int moved_first = 0;
        int src[25];
        int ns = sources(b, src);
        for (int i = 0; i < ns; i++) {
            int dst = step_dest(b, src[i], first);
            if (dst < 0)
                continue;
            moved_first = 1;
            Board b1 = *b;
            apply_step(&b1, src[i], dst);
            steps[0][0] = (uint8_t)src[i];
            steps[0][1] = (uint8_t)dst;
            int moved_second = 0;
            int src2[25];
            int ns2 = sources(&b1, src2);
            for (int k = 0; k < ns2; k++) {
                int dst2 = step_dest(&b1, src2[k], second);
                if (dst2 < 0)
                    continue;
                moved_second = 1;
                Board b2 = b1;
                apply_step(&b2, src2[k], dst2);
                steps[1][0] = (uint8_t)src2[k];
                steps[1][1] = (uint8_t)dst2;
                record(f, &b2, (const uint8_t(*)[2])steps, 2, first > second ? first : second);
            }
            if (!moved_second)
                record(f, &b1, (const uint8_t(*)[2])steps, 1, first);
        }
        if (!moved_first)
            record(f, b, (const uint8_t(*)[2])steps, 0, 0);
    }
    if (f->best_used == 1) { /* only one die can be played: the larger one must be, if it can */
        int high = d1 > d2 ? d1 : d2, any_high = 0;
        for (size_t i = 0; i < f->n; i++)
            any_high |= f->items[i].top == high;
        if (any_high)
            for (size_t i = 0; i < f->n; i++)
                f->items[i].keep = f->items[i].top == high;
    }
}

/* The board of a position given as gnubg's two sides of 25 counts (player on roll first, each in own numbering). */
static void board_from_sides(Board *b, const uint8_t me[25], const uint8_t opp[25]) {
    memset(b, 0, sizeof(*b));
    for (int p = 1; p <= 24; p++) {
        b->me[p] = me[p - 1];
        b->them[p] = opp[24 - p];
    }
    b->me[BAR] = me[24];
    b->them[BAR] = opp[24];
}

/* Every distinct position reachable from b with the roll d1-d2 into f (which the caller has initialised). */
static void generate(Found *f, const Board *b, int d1, int d2) {
    if (d1 == d2) {
        uint8_t steps[MAX_STEPS][2];
        gen_double(f, b, steps, 0, BAR, d1);
    } else {
        gen_non_double(f, b, d1, d2);
    }
}

/* ---- Python objects -------------------------------------------------------------------------------------- */

/* CPython's tuple hash (xxHash-based, the same from 3.8 to 3.13), so that Position's hash((me, opp)) is computed
 * from the counts without building the pair; setup() checks it against PyObject_Hash and falls back to
 * PyObject_Hash if the interpreter hashes tuples differently. A small int hashes to itself. */
#if SIZEOF_PY_UHASH_T > 4
#define XX_PRIME_1 ((Py_uhash_t)11400714785074694791ULL)
#define XX_PRIME_2 ((Py_uhash_t)14029467366897019727ULL)
#define XX_PRIME_5 ((Py_uhash_t)2870177450012600261ULL)
#define XX_ROTATE(x) (((x) << 31) | ((x) >> 33))
#else
#define XX_PRIME_1 ((Py_uhash_t)2654435761UL)
#define XX_PRIME_2 ((Py_uhash_t)2246822519UL)
#define XX_PRIME_5 ((Py_uhash_t)374761393UL)
#define XX_ROTATE(x) (((x) << 13) | ((x) >> 19))
#endif

static inline Py_uhash_t xx_lane(Py_uhash_t acc, Py_uhash_t lane) {
    acc += lane * XX_PRIME_2;
    acc = XX_ROTATE(acc);
    return acc * XX_PRIME_1;
}

static inline Py_hash_t xx_end(Py_uhash_t acc, Py_ssize_t len) {
    acc += (Py_uhash_t)len ^ (XX_PRIME_5 ^ 3527539UL);
    return acc == (Py_uhash_t)-1 ? 1546275796 : (Py_hash_t)acc;
}

/* hash() of the 25-tuple of a side's counts. */
static Py_hash_t side_hash(const uint8_t *counts) {
    Py_uhash_t acc = XX_PRIME_5;
    for (int i = 0; i < 25; i++)
        acc = xx_lane(acc, counts[i]);
    return xx_end(acc, 25);
}

static Py_hash_t pair_hash(Py_hash_t a, Py_hash_t b) {
    return xx_end(xx_lane(xx_lane(XX_PRIME_5, (Py_uhash_t)a), (Py_uhash_t)b), 2);
}

typedef struct {
    PyTypeObject *position, *move, *play;
    int fast_hash; /* pair_hash/side_hash agree with PyObject_Hash on this interpreter */
    PyObject *invalid_position; /* engine.errors.InvalidPositionError */
    Py_ssize_t pos_me, pos_opp, pos_hash, move_steps, play_move, play_position; /* slot offsets */
    PyObject *ints[CHEQUERS + 1];
    PyObject *step[BAR + 1][BAR];
} State;

static State S;

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

static void set_slot(PyObject *obj, Py_ssize_t off, PyObject *value) {
    PyObject *old = SLOT(obj, off);
    SLOT(obj, off) = value;
    Py_XDECREF(old);
}

static int slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *out) {
    PyObject *descr = PyDict_GetItemString(type->tp_dict, name); /* borrowed */
    if (!descr || !PyObject_TypeCheck(descr, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%s has no slot %s", type->tp_name, name);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
    if (m->type != T_OBJECT_EX || (m->flags & READONLY)) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a plain object slot", type->tp_name, name);
        return -1;
    }
    *out = m->offset;
    return 0;
}

static PyObject *counts_tuple(const State *s, const uint8_t counts[25]) {
    PyObject *t = PyTuple_New(25);
    for (int i = 0; t && i < 25; i++) {
        Py_INCREF(s->ints[counts[i]]);
        PyTuple_SET_ITEM(t, i, s->ints[counts[i]]);
    }
    return t;
}

/* 1 when side_hash and pair_hash match PyObject_Hash on a few boards, 0 when not, -1 on error. */
static int hash_self_check(const State *s) {
    static const uint8_t samples[3][25] = {
        {0},
        {0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0},
        {15, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6},
    };
    int agree = 1;
    for (int i = 0; i < 3 && agree; i++) {
        PyObject *a = counts_tuple(s, samples[i]), *b = counts_tuple(s, samples[(i + 1) % 3]), *pair = NULL;
        Py_hash_t ha = -1, hb = -1, hp = -1;
        if (a && b && (pair = PyTuple_Pack(2, a, b))) {
            ha = PyObject_Hash(a);
            hb = PyObject_Hash(b);
            hp = PyObject_Hash(pair);
        }
        Py_XDECREF(a);
        Py_XDECREF(b);
        Py_XDECREF(pair);
        if (ha == -1 || hb == -1 || hp == -1)
            return -1;
        agree = ha == side_hash(samples[i]) && hb == side_hash(samples[(i + 1) % 3]) &&
                hp == pair_hash(ha, hb);
    }
    return agree;
}

static void state_release(State *s) {
    Py_CLEAR(s->position);
    Py_CLEAR(s->move);
    Py_CLEAR(s->play);
    Py_CLEAR(s->invalid_position);
    for (int i = 0; i <= CHEQUERS; i++)
        Py_CLEAR(s->ints[i]);
    for (int src = 1; src <= BAR; src++)
        for (int dst = 0; dst < src; dst++)
            Py_CLEAR(s->step[src][dst]);
}

static PyObject *setup(PyObject *self, PyObject *args) {
    PyObject *pos, *move, *play, *err;
    int generic_hash = 0;
    if (!PyArg_ParseTuple(args, "O!O!O!O|p:setup", &PyType_Type, &pos, &PyType_Type, &move, &PyType_Type, &play,
                          &err, &generic_hash))
        return NULL;
    State s = {0};
    s.position = (PyTypeObject *)Py_NewRef(pos);
    s.move = (PyTypeObject *)Py_NewRef(move);
    s.play = (PyTypeObject *)Py_NewRef(play);
    s.invalid_position = Py_NewRef(err);
    if (slot_offset(s.position, "me", &s.pos_me) < 0 || slot_offset(s.position, "opp", &s.pos_opp) < 0 ||
        slot_offset(s.position, "_hash", &s.pos_hash) < 0 || slot_offset(s.move, "steps", &s.move_steps) < 0 ||
        slot_offset(s.play, "move", &s.play_move) < 0 || slot_offset(s.play, "position", &s.play_position) < 0)
        goto fail;
    for (int i = 0; i <= CHEQUERS; i++)
        if (!(s.ints[i] = PyLong_FromLong(i)))
            goto fail;
    for (int src = 1; src <= BAR; src++)
        for (int dst = 0; dst < src; dst++)
            if (!(s.step[src][dst] = Py_BuildValue("(ii)", src, dst)))
                goto fail;
    s.fast_hash = hash_self_check(&s);
    if (s.fast_hash < 0)
        goto fail;
    if (generic_hash) /* for tests: the path taken when the interpreter hashes tuples differently */
        s.fast_hash = 0;
    State old = S; /* a second setup (tests, a reloaded engine.moves) replaces the first */
    S = s;
    state_release(&old);
    return PyBool_FromLong(s.fast_hash);
fail:
    state_release(&s);
    return NULL;
}

static int read_side(PyObject *pos, Py_ssize_t off, const char *who, uint8_t out[25]) {
    PyObject *side = SLOT(pos, off);
    if (!side || !PyTuple_Check(side) || PyTuple_GET_SIZE(side) != 25) {
        PyErr_Format(S.invalid_position, "%s: expected a tuple of 25 counts", who);
        return -1;
    }
    long total = 0;
    for (Py_ssize_t i = 0; i < 25; i++) {
        long n = PyLong_AsLong(PyTuple_GET_ITEM(side, i));
        if (n == -1 && PyErr_Occurred())
            return -1;
        if (n < 0 || n > CHEQUERS || (total += n) > CHEQUERS) {
            PyErr_Format(S.invalid_position, "%s: counts outside 0..%d chequers", who, CHEQUERS);
            return -1;
        }
        out[i] = (uint8_t)n;
    }
    return 0;
}

static PyObject *new_instance(PyTypeObject *type) {
    return type->tp_alloc(type, 0);
}

static PyObject *make_play(const Result *r, const Board *start, PyObject *start_opp, Py_hash_t start_opp_hash) {
    PyObject *me = PyTuple_New(25), *opp, *pair, *position, *steps, *move, *play;
    if (!me)
        return NULL;
    for (int i = 0; i < 24; i++) {
        PyObject *n = S.ints[r->board.me[i + 1]];
        Py_INCREF(n);
        PyTuple_SET_ITEM(me, i, n);
    }
    Py_INCREF(S.ints[r->board.me[BAR]]);
    PyTuple_SET_ITEM(me, 24, S.ints[r->board.me[BAR]]);
    Py_hash_t opp_hash = start_opp_hash;
    if (memcmp(r->board.them, start->them, sizeof(start->them)) == 0) { /* nothing hit: share the tuple */
        opp = start_opp;
        Py_INCREF(opp);
    } else {
        if (!(opp = PyTuple_New(25))) {
            Py_DECREF(me);
            return NULL;
        }
        for (int j = 0; j < 24; j++) { /* the opponent's point j + 1 is my point 24 - j */
            PyObject *n = S.ints[r->board.them[24 - j]];
            Py_INCREF(n);
            PyTuple_SET_ITEM(opp, j, n);
        }
        Py_INCREF(S.ints[r->board.them[BAR]]);
        PyTuple_SET_ITEM(opp, 24, S.ints[r->board.them[BAR]]);
        if (S.fast_hash) {
            uint8_t counts[25];
            for (int j = 0; j < 24; j++)
                counts[j] = r->board.them[24 - j];
            counts[24] = r->board.them[BAR];
            opp_hash = side_hash(counts);
        }
    }
    Py_hash_t h = -1;
    if (S.fast_hash) {
        h = pair_hash(side_hash(&r->board.me[1]), opp_hash);
    } else if ((pair = PyTuple_Pack(2, me, opp))) {
        h = PyObject_Hash(pair);
        Py_DECREF(pair);
    }
    PyObject *hash = h == -1 ? NULL : PyLong_FromSsize_t(h);
    if (!hash || !(position = new_instance(S.position))) {
        Py_XDECREF(hash);
        Py_DECREF(me);
        Py_DECREF(opp);
        return NULL;
    }
    set_slot(position, S.pos_me, me);
    set_slot(position, S.pos_opp, opp);
    set_slot(position, S.pos_hash, hash);

    if (!(steps = PyTuple_New(r->nsteps))) {
        Py_DECREF(position);
        return NULL;
    }
    for (int i = 0; i < r->nsteps; i++) {
        PyObject *st = S.step[r->steps[i][0]][r->steps[i][1]];
        Py_INCREF(st);
        PyTuple_SET_ITEM(steps, i, st);
    }
    if (!(move = new_instance(S.move))) {
        Py_DECREF(steps);
        Py_DECREF(position);
        return NULL;
    }
    set_slot(move, S.move_steps, steps);
    if (!(play = new_instance(S.play))) {
        Py_DECREF(move);
        Py_DECREF(position);
        return NULL;
    }
    set_slot(play, S.play_move, move);
    set_slot(play, S.play_position, position);
    return play;
}

static int by_canon_descending(const void *a, const void *b) {
    uint64_t x = (*(const Result *const *)a)->canon, y = (*(const Result *const *)b)->canon;
    return x < y ? 1 : x > y ? -1 : 0;
}

static PyObject *legal_plays(PyObject *self, PyObject *args) {
    PyObject *pos;
    int d1, d2;
    if (!S.position) {
        PyErr_SetString(PyExc_RuntimeError, "engine._movegen.setup() has not been called");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!ii:legal_plays", S.position, &pos, &d1, &d2))
        return NULL;
    if (d1 < 1 || d1 > 6 || d2 < 1 || d2 > 6) {
        PyErr_Format(PyExc_ValueError, "dice %d%d are not both in 1..6", d1, d2);
        return NULL;
    }
    uint8_t me[25], opp[25];
    if (read_side(pos, S.pos_me, "player on roll", me) < 0 || read_side(pos, S.pos_opp, "opponent", opp) < 0)
        return NULL;
    Board start;
    board_from_sides(&start, me, opp);

    Found found, *f = &found; /* on the stack: legal_plays may run again (from a finaliser) while it builds */
    found_init(f);
    generate(f, &start, d1, d2);
    PyObject *list = NULL;
    const Result **order = NULL;
    if (f->failed) {
        PyErr_NoMemory();
        goto done;
    }
    if (!(order = PyMem_Malloc(sizeof(Result *) * (f->n ? f->n : 1)))) {
        PyErr_NoMemory();
        goto done;
    }
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++)
        if (f->items[i].keep)
            order[n++] = &f->items[i];
    qsort(order, n, sizeof(Result *), by_canon_descending);
    if (!(list = PyList_New((Py_ssize_t)n)))
        goto done;
    PyObject *start_opp = SLOT(pos, S.pos_opp);
    Py_hash_t start_opp_hash = S.fast_hash ? side_hash(opp) : -1;
    for (size_t i = 0; i < n; i++) {
        PyObject *play = make_play(order[i], &start, start_opp, start_opp_hash);
        if (!play) {
            Py_CLEAR(list);
            goto done;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, play);
    }
done:
    PyMem_Free(order);
    found_free(f);
    return list;
}

/* ---- Search: every roll's children of many boards at once, as bytes ------------------------------------- */

/* The 21 distinct rolls in engine.search.ROLLS order: (1,1), (2,2), (2,1), (3,3), (3,2), (3,1), ... */
static void roll_dice(int k, int *d1, int *d2) {
    int a = 1;
    while (k >= a) {
        k -= a;
        a++;
    }
    *d1 = a;
    *d2 = a - k;
}

typedef struct {
    uint8_t *data;
    size_t n, cap; /* in boards of 50 bytes */
} Out;

static int out_reserve(Out *o, size_t more) {
    if (o->n + more <= o->cap)
        return 0;
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < o->n + more)
        cap *= 2;
    uint8_t *data = PyMem_Realloc(o->data, cap * 50);
    if (!data)
        return -1;
    o->data = data;
    o->cap = cap;
    return 0;
}

static PyObject *children(PyObject *self, PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*:children", &buf))
        return NULL;
    PyObject *result = NULL;
    Out out = {NULL, 0, 0};
    int32_t *counts = NULL;
    const Result **order = NULL;
    size_t order_cap = 0;
    if (buf.len % 50) {
        PyErr_SetString(PyExc_ValueError, "children() takes whole boards of 2 x 25 bytes");
        goto done;
    }
    size_t nboards = (size_t)buf.len / 50;
    if (!(counts = PyMem_Malloc(sizeof(int32_t) * 21 * (nboards ? nboards : 1)))) {
        PyErr_NoMemory();
        goto done;
    }
    const uint8_t *in = buf.buf;
    for (size_t i = 0; i < nboards; i++) {
        const uint8_t *me = in + 50 * i, *opp = me + 25;
        int tme = 0, topp = 0;
        for (int p = 0; p < 25; p++) {
            tme += me[p];
            topp += opp[p];
        }
        if (tme > CHEQUERS || topp > CHEQUERS) {
            PyErr_Format(PyExc_ValueError, "board %zd has more than %d chequers a side", (Py_ssize_t)i, CHEQUERS);
            goto done;
        }
        Board start;
        board_from_sides(&start, me, opp);
        for (int k = 0; k < 21; k++) {
            int d1, d2;
            roll_dice(k, &d1, &d2);
            Found found, *f = &found;
            found_init(f);
            generate(f, &start, d1, d2);
            if (!f->failed && f->n > order_cap) {
                const Result **grown = PyMem_Realloc(order, sizeof(Result *) * f->n * 2);
                if (grown) {
                    order = grown;
                    order_cap = f->n * 2;
                } else {
                    f->failed = 1;
                }
            }
            if (f->failed) {
                found_free(f);
                PyErr_NoMemory();
                goto done;
            }
            size_t n = 0;
            for (size_t j = 0; j < f->n; j++)
                if (f->items[j].keep)
                    order[n++] = &f->items[j];
            /* legal_plays' order, so that ties go the same way as in the object path */
            qsort(order, n, sizeof(Result *), by_canon_descending);
            if (out_reserve(&out, n) < 0) {
                found_free(f);
                PyErr_NoMemory();
                goto done;
            }
            for (size_t j = 0; j < n; j++) { /* swapped: the opponent is on roll in the child */
                const Board *b = &order[j]->board;
                uint8_t *dst = out.data + 50 * out.n++;
                for (int q = 0; q < 24; q++) {
                    dst[q] = b->them[24 - q];
                    dst[25 + q] = b->me[q + 1];
                }
                dst[24] = b->them[BAR];
                dst[49] = b->me[BAR];
            }
            counts[21 * i + k] = (int32_t)n;
            found_free(f);
        }
    }
    result = Py_BuildValue("y#y#", out.data ? (const char *)out.data : "", (Py_ssize_t)(out.n * 50),
                           (const char *)counts, (Py_ssize_t)(sizeof(int32_t) * 21 * nboards));
done:
    PyBuffer_Release(&buf);
    PyMem_Free(out.data);
    PyMem_Free(counts);
    PyMem_Free(order);
    return result;
}

/* ---- Rollouts: the children of one given roll per board ------------------------------------------------- */

/* Appends the legal children of b for d1-d2 to out (legal_plays order, swapped so the opponent is on roll);
 * returns their number, or -1 (memory error set). order/order_cap: a scratch array the caller keeps. */
static Py_ssize_t emit_roll_children(Out *out, const Board *b, int d1, int d2, const Result ***order,
                                     size_t *order_cap) {
    Found found, *f = &found;
    found_init(f);
    generate(f, b, d1, d2);
    if (!f->failed && f->n > *order_cap) {
        const Result **grown = PyMem_Realloc(*order, sizeof(Result *) * f->n * 2);
        if (grown) {
            *order = grown;
            *order_cap = f->n * 2;
        } else {
            f->failed = 1;
        }
    }
    if (f->failed || out_reserve(out, f->n) < 0) {
        found_free(f);
        PyErr_NoMemory();
        return -1;
    }
    size_t n = 0;
    for (size_t j = 0; j < f->n; j++)
        if (f->items[j].keep)
            (*order)[n++] = &f->items[j];
    qsort(*order, n, sizeof(Result *), by_canon_descending);
    for (size_t j = 0; j < n; j++) {
        const Board *c = &(*order)[j]->board;
        uint8_t *dst = out->data + 50 * out->n++;
        for (int q = 0; q < 24; q++) {
            dst[q] = c->them[24 - q];
            dst[25 + q] = c->me[q + 1];
        }
        dst[24] = c->them[BAR];
        dst[49] = c->me[BAR];
    }
    found_free(f);
    return (Py_ssize_t)n;
}

static PyObject *rolled_children(PyObject *self, PyObject *args) {
    Py_buffer buf, rolls;
    if (!PyArg_ParseTuple(args, "y*y*:rolled_children", &buf, &rolls))
        return NULL;
    PyObject *result = NULL;
    Out out = {NULL, 0, 0};
    int32_t *counts = NULL;
    const Result **order = NULL;
    size_t order_cap = 0;
    if (buf.len % 50) {
        PyErr_SetString(PyExc_ValueError, "rolled_children() takes whole boards of 2 x 25 bytes");
        goto done;
    }
    size_t nboards = (size_t)buf.len / 50;
    if ((size_t)rolls.len != nboards) {
        PyErr_Format(PyExc_ValueError, "rolled_children() takes one roll per board: %zd boards, %zd rolls",
                     (Py_ssize_t)nboards, rolls.len);
        goto done;
    }
    if (!(counts = PyMem_Malloc(sizeof(int32_t) * (nboards ? nboards : 1)))) {
        PyErr_NoMemory();
        goto done;
    }
    const uint8_t *in = buf.buf, *rk = rolls.buf;
    for (size_t i = 0; i < nboards; i++) {
        const uint8_t *me = in + 50 * i, *opp = me + 25;
        int tme = 0, topp = 0;
        for (int p = 0; p < 25; p++) {
            tme += me[p];
            topp += opp[p];
        }
        if (tme > CHEQUERS || topp > CHEQUERS) {
            PyErr_Format(PyExc_ValueError, "board %zd has more than %d chequers a side", (Py_ssize_t)i, CHEQUERS);
            goto done;
        }
        if (rk[i] > 20) {
            PyErr_Format(PyExc_ValueError, "roll %d of board %zd is not in 0..20", (int)rk[i], (Py_ssize_t)i);
            goto done;
        }
        Board start;
        board_from_sides(&start, me, opp);
        int d1, d2;
        roll_dice(rk[i], &d1, &d2);
        Py_ssize_t n = emit_roll_children(&out, &start, d1, d2, &order, &order_cap);
        if (n < 0)
            goto done;
        counts[i] = (int32_t)n;
    }
    result = Py_BuildValue("y#y#", out.data ? (const char *)out.data : "", (Py_ssize_t)(out.n * 50),
                           (const char *)counts, (Py_ssize_t)(sizeof(int32_t) * nboards));
done:
    PyBuffer_Release(&buf);
    PyBuffer_Release(&rolls);
    PyMem_Free(out.data);
    PyMem_Free(counts);
    PyMem_Free(order);
    return result;
}

/* ---- Contact features: engine/features.py in C (the numpy module is the reference; tests hold them equal) ---- */

static int8_t escapes[4096];
static int escapes_ready = 0;

static int esc_open(int pattern, int d) { return d > 12 || !((pattern >> (d - 1)) & 1); }

static void escapes_init(void) {
    for (int pattern = 0; pattern < 4096; pattern++) {
        int last = 0, count = 0;
        for (int k = 0; k < 12; k++)
            if ((pattern >> k) & 1)
                last = k + 1;
        for (int a = 1; a <= 6; a++)
            for (int b = 1; b <= 6; b++) {
                int far;
                if (a == b) {
                    far = 0;
                    for (int k = 1; k <= 4 && esc_open(pattern, k * a); k++)
                        far = k * a;
                } else {
                    far = 0;
                    if (esc_open(pattern, a) && a > far)
                        far = a;
                    if (esc_open(pattern, b) && b > far)
                        far = b;
                    if (esc_open(pattern, a + b) && (esc_open(pattern, a) || esc_open(pattern, b)))
                        far = a + b;
                }
                count += far > last;
            }
        escapes[pattern] = (int8_t)count;
    }
    escapes_ready = 1;
}

/* Point masks of one side's 25 counts (bit k = index k), in its own numbering or reversed (the other's). */
static void side_masks(const uint8_t *c, int reverse, int64_t *made, int64_t *blots, int64_t *occ) {
    int64_t m = 0, b = 0, o = 0;
    for (int k = 0; k < 24; k++) {
        int n = c[reverse ? 23 - k : k];
        if (n >= 2)
            m |= (int64_t)1 << k;
        if (n == 1)
            b |= (int64_t)1 << k;
        if (n >= 1)
            o |= (int64_t)1 << k;
    }
    *made = m;
    *blots = b;
    *occ = o;
}

static int hit_rolls(const uint8_t *target, const uint8_t *shooter) {
    int64_t made, blots, occ, src, dummy1, dummy2;
    side_masks(target, 1, &made, &blots, &occ);
    side_masks(shooter, 0, &dummy1, &dummy2, &src);
    int64_t bar = shooter[24], free_ = ~made & ((1 << 24) - 1);
    if (!blots)
        return 0;
    int rolls = 0;
    for (int a = 1; a <= 6; a++)
        for (int b = a + 1; b <= 6; b++) {
            int64_t ea = (int64_t)1 << (24 - a), eb = (int64_t)1 << (24 - b);
            int hit;
            if (bar == 0)
                hit = ((((src >> a) | (src >> b)) & blots) |
                       (((((src >> a) & free_) >> b) | (((src >> b) & free_) >> a)) & blots)) != 0;
            else if (bar == 1)
                hit = (!(ea & made) && ((ea & blots) | (((src | ea) >> b) & blots))) ||
                      (!(eb & made) && ((eb & blots) | (((src | eb) >> a) & blots)));
            else
                hit = ((ea | eb) & blots) != 0;
            rolls += 2 * hit;
        }
    for (int d = 1; d <= 6; d++) {
        int64_t e = (int64_t)1 << (24 - d), cur;
        int open_ = !(e & made), hit = 0;
        int64_t steps = 4 - bar < 0 ? 0 : 4 - bar;
        if (bar > 0) {
            hit = open_ && (e & blots);
            cur = open_ ? (src | e) : 0;
        } else
            cur = src;
        for (int j = 1; j <= 4; j++) {
            cur >>= d;
            if (j <= steps && (cur & blots))
                hit = 1;
            cur &= free_;
        }
        rolls += hit;
    }
    return rolls;
}

static int rearmost(const uint8_t *c) {
    for (int k = 24; k >= 0; k--)
        if (c[k])
            return k;
    return -1;
}

static void side_features(const uint8_t *me, const uint8_t *opp, float *out) {
    int64_t opp_made, my_made, x, y;
    out[0] = (float)hit_rolls(me, opp) / 36.0f;
    side_masks(opp, 0, &opp_made, &x, &y);
    side_masks(me, 0, &my_made, &x, &y);
    int rear = rearmost(me);
    int pattern = (int)((opp_made >> (24 - (rear > 0 ? rear : 0))) & 0xFFF);
    out[1] = (float)(rear >= 0 ? escapes[pattern] : 36) / 36.0f;
    int least = 36;
    for (int q = 12; q < 24; q++) {
        int e = escapes[(my_made >> (24 - q)) & 0xFFF];
        if (e < least)
            least = e;
    }
    out[2] = 1.0f - (float)least / 36.0f;
    out[3] = out[2] * out[2];
    int top = 0;
    for (int k = 0; k < 6; k++)
        if (me[18 + k] >= 2)
            top = k + 1;
    out[4] = (float)(top / 6.0);
    out[5] = (float)((rear + 1) / 25.0);
    int opp_rear = rearmost(opp);
    long pips = 0;
    if (opp_rear >= 0) {
        int line = 23 - opp_rear;
        for (int k = 0; k < 25; k++)
            if (k - line + 1 > 0)
                pips += (long)(k - line + 1) * me[k];
    }
    out[6] = (float)(pips / 100.0);
}

/* Whether a buffer holds whole 50-byte boards; if not, releases it and sets ValueError naming the function. */
static int whole_boards(Py_buffer *buf, const char *function) {
    if (buf->len % 50 == 0)
        return 1;
    PyBuffer_Release(buf);
    PyErr_Format(PyExc_ValueError, "%s() takes whole boards of 2 x 25 bytes", function);
    return 0;
}

static PyObject *features(PyObject *self, PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*:features", &buf))
        return NULL;
    if (!whole_boards(&buf, "features"))
        return NULL;
    if (!escapes_ready)
        escapes_init();
    Py_ssize_t n = buf.len / 50;
    PyObject *result = PyBytes_FromStringAndSize(NULL, n * 14 * (Py_ssize_t)sizeof(float));
    if (result) {
        float *out = (float *)PyBytes_AS_STRING(result);
        const uint8_t *in = buf.buf;
        for (Py_ssize_t i = 0; i < n; i++) {
            const uint8_t *me = in + 50 * i, *opp = me + 25;
            side_features(me, opp, out + 14 * i);
            side_features(opp, me, out + 14 * i + 7);
        }
    }
    PyBuffer_Release(&buf);
    return result;
}

/* -- inputs of the nets and the class of each board (engine.encoding.encode, engine.evaluator.route) ------- */

/* engine.encoding.encode for one board: 200 one-hot-ish counts, then 6 numbers per side. Every number is an
   integer count divided once by a constant, as numpy computes it in float32, so the two agree bit for bit. */
static void encode_one(const uint8_t *board, float *out) {
    for (int s = 0; s < 2; s++) {
        const uint8_t *b = board + 25 * s;
        float *o = out + 100 * s;
        for (int p = 0; p < 25; p++) {
            int c = b[p];
            o[4 * p + 0] = (float)(p == 24 ? c >= 1 : c == 1);
            o[4 * p + 1] = (float)(p == 24 ? c >= 2 : c == 2);
            o[4 * p + 2] = (float)(c >= 3);
            o[4 * p + 3] = (float)(c > 3 ? c - 3 : 0) / 2.0f;
        }
        int total = 0, pips = 0, back = 0, home_made = 0, run = 0, longest = 0, blots = 0;
        for (int p = 0; p < 25; p++) {
            total += b[p];
            pips += b[p] * (p + 1);
            if (p >= 18)
                back += b[p];
        }
        for (int p = 0; p < 24; p++) {
            int made = b[p] >= 2;
            home_made += made && p < 6;
            run = made ? run + 1 : 0;
            longest = run > longest ? run : longest;
            blots += b[p] == 1;
        }
        float *f = out + 200 + 6 * s;
        f[0] = (float)(15 - total) / 15.0f;
        f[1] = (float)pips / 167.0f;
        f[2] = (float)back / 15.0f;
        f[3] = (float)home_made / 6.0f;
        f[4] = (float)(longest < 6 ? longest : 6) / 6.0f;
        f[5] = (float)blots / 15.0f;
    }
}

static PyObject *encode(PyObject *self, PyObject *args) {
    Py_buffer buf;
    int with_features = 0;
    if (!PyArg_ParseTuple(args, "y*|p:encode", &buf, &with_features))
        return NULL;
    if (!whole_boards(&buf, "encode"))
        return NULL;
    if (with_features && !escapes_ready)
        escapes_init();
    Py_ssize_t n = buf.len / 50, width = with_features ? 226 : 212;
    PyObject *result = PyBytes_FromStringAndSize(NULL, n * width * (Py_ssize_t)sizeof(float));
    if (result) {
        float *out = (float *)PyBytes_AS_STRING(result);
        const uint8_t *in = buf.buf;
        for (Py_ssize_t i = 0; i < n; i++) {
            const uint8_t *me = in + 50 * i, *opp = me + 25;
            float *o = out + width * i;
            encode_one(me, o);
            if (with_features) {
                side_features(me, opp, o + 212);
                side_features(opp, me, o + 219);
            }
        }
    }
    PyBuffer_Release(&buf);
    return result;
}

/* engine.evaluator.route for one board: over, home (bearoff domain), contact, crashed, as gnubg classifies. */
static void route_one(const uint8_t *board, uint8_t *out) {
    int counts[2], back[2], crashed_side[2];
    for (int s = 0; s < 2; s++) {
        const uint8_t *b = board + 25 * s;
        counts[s] = 0;
        back[s] = -1;
        for (int p = 0; p < 25; p++) {
            counts[s] += b[p];
            if (b[p] > 0)
                back[s] = p;
        }
        int b0 = b[0], b1 = b[1], c = counts[s];
        crashed_side[s] = c <= 6 || (b0 > 1 ? (c - b0 <= 6) || (b1 > 1 && 1 + c - (b0 + b1) <= 6) : c - (b1 - 1) <= 6);
    }
    int over = counts[0] == 0 || counts[1] == 0;
    out[0] = (uint8_t)over;
    out[1] = (uint8_t)(!over && back[0] < 6 && back[1] < 6);
    out[2] = (uint8_t)(!over && back[0] + back[1] > 22);
    out[3] = (uint8_t)(out[2] && (crashed_side[0] || crashed_side[1]));
}

static PyObject *route(PyObject *self, PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*:route", &buf))
        return NULL;
    if (!whole_boards(&buf, "route"))
        return NULL;
    Py_ssize_t n = buf.len / 50;
    PyObject *result = PyBytes_FromStringAndSize(NULL, 4 * n);
    if (result) {
        uint8_t *out = (uint8_t *)PyBytes_AS_STRING(result);
        const uint8_t *in = buf.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            route_one(in + 50 * i, out + 4 * i);
    }
    PyBuffer_Release(&buf);
    return result;
}

/* engine.race_bounds.side_stats for both sides of each board: per side its crossings to the home board, pips,
   pips beyond the six-point, chequers back (points 19-24 and the bar), chequers outside the home board and
   chequers, as int32. */
static PyObject *race_stats(PyObject *self, PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*:race_stats", &buf))
        return NULL;
    if (!whole_boards(&buf, "race_stats"))
        return NULL;
    Py_ssize_t n = buf.len / 50;
    PyObject *result = PyBytes_FromStringAndSize(NULL, 12 * n * (Py_ssize_t)sizeof(int32_t));
    if (result) {
        int32_t *out = (int32_t *)PyBytes_AS_STRING(result);
        const uint8_t *in = buf.buf;
        for (Py_ssize_t i = 0; i < 2 * n; i++) {
            const uint8_t *b = in + 25 * i;
            int32_t cross = 0, pips = 0, outside_pips = 0, back = 0, outside = 0, count = 0;
            for (int p = 0; p < 25; p++) {
                int c = b[p];
                cross += c * (p / 6);
                pips += c * (p + 1);
                count += c;
                if (p >= 6) {
                    outside_pips += c * (p - 5);
                    outside += c;
                }
                if (p >= 18)
                    back += c;
            }
            int32_t *o = out + 6 * i;
            o[0] = cross;
            o[1] = pips;
            o[2] = outside_pips;
            o[3] = back;
            o[4] = outside;
            o[5] = count;
        }
    }
    PyBuffer_Release(&buf);
    return result;
}

/* engine.bearoff.ranking.rank_array of both sides' points 1-6 of each board (the one-sided bearoff index;
   chequers beyond the six-point are ignored), as int64. */
static int64_t rank_binom[21][7];
static int rank_binom_ready = 0;

static PyObject *home_ranks(PyObject *self, PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*:home_ranks", &buf))
        return NULL;
    if (!whole_boards(&buf, "home_ranks"))
        return NULL;
    if (!rank_binom_ready) {
        for (int n = 0; n < 21; n++)
            for (int k = 0; k < 7; k++)
                rank_binom[n][k] = k == 0 ? 1 : n == 0 ? 0 : rank_binom[n - 1][k - 1] + rank_binom[n - 1][k];
        rank_binom_ready = 1;
    }
    Py_ssize_t n = buf.len / 50;
    PyObject *result = PyBytes_FromStringAndSize(NULL, 2 * n * (Py_ssize_t)sizeof(int64_t));
    if (result) {
        int64_t *out = (int64_t *)PyBytes_AS_STRING(result);
        const uint8_t *in = buf.buf;
        for (Py_ssize_t i = 0; i < 2 * n; i++) {
            const uint8_t *b = in + 25 * i;
            int64_t total = 0;
            int bar = -1;
            for (int k = 1; k <= 6 && bar < 21; k++) {
                bar += 1 + b[6 - k];
                if (bar < 21)
                    total += rank_binom[bar][k];
            }
            out[i] = bar < 21 ? total : -1; /* more than 15 chequers home: no bearoff index */
        }
    }
    PyBuffer_Release(&buf);
    return result;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(Position, Move, Play, InvalidPositionError, generic_hash=False): the classes legal_plays builds\n"
     "and raises; generic_hash=True computes Position hashes with PyObject_Hash even where the built-in\n"
     "tuple hash formula agrees with it. Returns whether that formula is used."},
    {"legal_plays", legal_plays, METH_VARARGS,
     "legal_plays(pos, d1, d2) -> list[Play]: engine.moves.legal_plays for checked dice, in C."},
    {"children", children, METH_VARARGS,
     "children(boards: bytes) -> (bytes, bytes): for n boards of 50 bytes (gnubg's 2 x 25 counts, player on\n"
     "roll first), every distinct position after each of the 21 rolls (search.ROLLS order, legal_plays order\n"
     "within a roll), swapped so that the opponent is on roll, as 50-byte boards; and the int32 number of\n"
     "children per board and roll (n x 21, native byte order). A roll with no legal play has one child."},
    {"rolled_children", rolled_children, METH_VARARGS,
     "rolled_children(boards: bytes, rolls: bytes) -> (bytes, bytes): as children() for one roll per board\n"
     "(rolls: one byte per board, the roll's index 0..20 in search.ROLLS order): that roll's children only,\n"
     "and the int32 number of children per board (n, native byte order)."},
    {"features", features, METH_VARARGS,
     "features(boards: bytes) -> bytes: engine.features.features for n boards of 50 bytes (player on roll\n"
     "first), as n x 14 float32 in native byte order."},
    {"encode", encode, METH_VARARGS,
     "encode(boards: bytes, features=False) -> bytes: engine.encoding.encode for n boards of 50 bytes (player on\n"
     "roll first) as n x 212 float32 in native byte order; with features, n x 226 (engine.encoding.encode_contact)."},
    {"home_ranks", home_ranks, METH_VARARGS,
     "home_ranks(boards: bytes) -> bytes: engine.bearoff.ranking.rank_array of both sides' points 1-6 of n boards\n"
     "of 50 bytes, as n x 2 int64 in native byte order (-1 for more than 15 chequers there)."},
    {"race_stats", race_stats, METH_VARARGS,
     "race_stats(boards: bytes) -> bytes: engine.race_bounds.side_stats of both sides of n boards of 50 bytes, as\n"
     "n x 2 x 6 int32 in native byte order."},
    {"route", route, METH_VARARGS,
     "route(boards: bytes) -> bytes: engine.evaluator.route for n boards of 50 bytes, as n x 4 flags (over, home,\n"
     "contact, crashed)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "engine._movegen",
    "The legal-move generator of engine.moves in C (see engine/_movegen.c).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__movegen(void) {
    return PyModule_Create(&module);
}
