/* maic's lesson player: plays the lesson in the JSON block #lesson-data (see maic_cli/formats/player.py).
   No network, no eval, no innerHTML: every lesson text reaches the page as textContent. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("lesson-data").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var scenes = data.scenes, words = data.words;
  var sections = Array.prototype.slice.call(document.querySelectorAll("section.scene"));
  var audio = $("voice"), spans = data.spans;

  /* -- stops: one per line said (at least one per scene), then the end ----------------------- */
  var stops = [];
  scenes.forEach(function (scene, si) {
    var says = [];
    scene.steps.forEach(function (step, i) { if (step.say !== undefined) says.push(i); });
    scene.says = says;
    for (var k = 0; k < Math.max(1, says.length); k++) stops.push({ si: si, k: k });
  });
  stops.push({ si: -1, k: 0 });
  var at = 0, shownScene = null, playing = false, timer = null, watcher = null;
  var answers = {}, done = {}, results = {};

  function text(node, value) { node.textContent = value; }
  function speaker(id) { return data.speakers[id] || data.speakers[data.teacher] || { name: "", color: "#8c959f" }; }

  function pointers(scene, k) {
    var until = k < scene.says.length - 1 ? scene.says[k] : scene.steps.length - 1;
    var spot = null, laser = null;
    for (var i = 0; i <= until; i++) {
      var step = scene.steps[i];
      if (step.spotlight !== undefined) spot = step.spotlight;
      if (step.laser !== undefined) laser = step.laser;
    }
    return { spot: spot, laser: laser };
  }

  function lineAt(stop) {
    if (stop.si < 0) return null;
    var scene = scenes[stop.si];
    return scene.says.length ? scene.steps[scene.says[stop.k]] : null;
  }

  function render(focus) {
    var stop = stops[at], si = stop.si;
    var section = si < 0 ? sections[sections.length - 1] : sections[si];
    var changed = shownScene !== section;
    sections.forEach(function (s) { s.hidden = s !== section; });
    if (si >= 0 && scenes[si].type === "slide") {
      var p = pointers(scenes[si], stop.k);
      Array.prototype.forEach.call(section.querySelectorAll(".mel[data-el]"), function (el) {
        var id = el.getAttribute("data-el");
        el.classList.toggle("spot", id === p.spot);
        el.classList.toggle("laser", id === p.laser);
      });
    }
    var line = lineAt(stop), who = line ? speaker(line.by) : null;
    var band = $("band").querySelector(".mband");
    band.style.setProperty("--agent", who ? who.color : "#8c959f");
    text(band.querySelector(".mavatar"), who ? who.name.slice(0, 1).toUpperCase() : "");
    text(band.querySelector(".mname"), who ? who.name : "");
    text(band.querySelector(".mline"), line ? line.say : "");
    $("band").classList.toggle("quiet", !line);
    Array.prototype.forEach.call(document.querySelectorAll(".card"), function (card) {
      var speaking = !!line && card.getAttribute("data-sp") === line.by;
      card.classList.toggle("speaking", speaking);
      text(card.querySelector(".line"), speaking ? line.say : "");
    });
    var where = si < 0 ? "The end" : "Scene " + (si + 1) + " of " + scenes.length + " · " + scenes[si].title;
    if (si >= 0 && scenes[si].says.length > 1) where += " · line " + (stop.k + 1) + " of " + scenes[si].says.length;
    text($("where"), where);
    $("prev").disabled = at === 0;
    $("next").disabled = at === stops.length - 1;
    if (si < 0) summary();
    var active = document.activeElement;
    if (changed && shownScene !== null && (focus || !active || active === document.body || !section.contains(active) &&
                    !$("controls").contains(active))) {
      var heading = section.querySelector("h2, h3");
      if (heading) { heading.setAttribute("tabindex", "-1"); heading.focus({ preventScroll: true }); }
    }
    shownScene = section;
    lms.place(false);
  }

  function go(to) {
    at = Math.max(0, Math.min(stops.length - 1, to));
    render(false);
    if (playing) playCurrent();
  }

  /* -- playing the lines aloud (the voice track) or at reading pace ------------------------- */
  function stopTimers() {
    if (timer) clearTimeout(timer);
    if (watcher) clearInterval(watcher);
    timer = watcher = null;
    if (audio && !audio.paused) audio.pause();
  }
  function setPlaying(on) {
    playing = on;
    $("play").setAttribute("aria-pressed", on ? "true" : "false");
    text($("play").querySelector(".icon"), on ? "❚❚" : "▶");
    if (!on) stopTimers();
  }
  function advance() {
    var stop = stops[at];
    if (at >= stops.length - 1 || (stop.si >= 0 && scenes[stop.si].type === "quiz" && !done[stop.si])) {
      setPlaying(false);
      return;
    }
    go(at + 1);
  }
  function byClock(line) {
    timer = setTimeout(advance, line ? Math.min(12000, 1200 + 55 * line.say.length) : 1500);
  }
  function playCurrent() {
    stopTimers();
    var line = lineAt(stops[at]);
    var span = line && spans && audio ? spans[line.n] : null;
    if (!span) { byClock(line); return; }
    audio.currentTime = span[0];
    var started = audio.play();
    var follow = function () {
      watcher = setInterval(function () {
        if (audio.currentTime >= span[1] || audio.ended) { stopTimers(); timer = setTimeout(advance, 300); }
      }, 40);
    };
    if (started && started.then) started.then(follow, function () { byClock(line); }); else follow();
  }

  $("next").addEventListener("click", function () { go(at + 1); });
  $("prev").addEventListener("click", function () { go(at - 1); });
  $("play").addEventListener("click", function () {
    if (playing) { setPlaying(false); return; }
    setPlaying(true);
    playCurrent();
  });
  document.addEventListener("keydown", function (event) {
    var tag = (event.target && event.target.tagName) || "";
    if (/^(INPUT|TEXTAREA|BUTTON|SELECT)$/.test(tag) || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "ArrowRight") { go(at + 1); event.preventDefault(); }
    else if (event.key === "ArrowLeft") { go(at - 1); event.preventDefault(); }
    else if (event.key === " ") { $("play").click(); event.preventDefault(); }
  });

  /* -- the rubric check: lessons/rubric.py's measure, mirrored -------------------------------- */
  var STOP = new Set(words.stop), NEG = new Set(words.neg), AUX = new Set(words.aux);
  var YES = new Set(["yes", "yeah", "yep", "yup", "true", "correct", "right"]);
  var NO = new Set(["no", "nope", "nah", "false", "wrong"]);
  var WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;
  function wordsOf(s) { return (s.match(WORD) || []).map(function (w) { return w.replace(/’/g, "'").toLowerCase(); }); }
  function content(list) { return list.filter(function (w) { return words.en ? !STOP.has(w) : w.length > 2; }); }
  /* The page has no Snowball stemmer: an answer's word is brought to a root by its common endings, and a rubric
     stem (the Snowball stem Python gave, or a synonym's) matches a word whose root is that stem; the term's own
     stem also matches a related form (a shared start of 4+ letters with at most 3 more), as rubric.py does. */
  var ENDINGS = ["ational", "ations", "ation", "ings", "ing", "ies", "ied", "ions", "ion", "edly", "ed", "ers", "er",
                 "est", "ness", "ments", "ment", "ence", "ent", "ly", "es", "s", "e", "y"];
  var rootsOf = new Map();
  function roots(word) {  /* the word and every root its endings leave (running → runn → run) */
    if (rootsOf.has(word)) return rootsOf.get(word);
    var out = [word];
    ENDINGS.forEach(function (end) {
      if (word.length - end.length >= 3 && word.slice(-end.length) === end) {
        var left = word.slice(0, -end.length);
        out.push(left);
        if (/([^aeiouls])\1$/.test(left)) out.push(left.slice(0, -1));
      }
    });
    rootsOf.set(word, out);
    return out;
  }
  function bare(stem) { return stem.length > 3 ? stem.replace(/[ei]$/, "") : stem; }
  function stemMatches(stem, word) {
    var want = bare(stem);
    return word === stem || roots(word).some(function (r) { return bare(r) === want; });
  }
  function related(stem, word) {
    var one = bare(stem);
    return roots(word).some(function (other) {
      var short = one.length <= other.length ? one : other, long = one.length <= other.length ? other : one;
      return short.length >= 4 && long.length - short.length <= 3 && long.indexOf(short) === 0;
    });
  }
  function termSaid(term, said) {
    return said.some(function (w) {
      return term.s.some(function (stem) { return stemMatches(stem, w); }) || (!!term.t && related(term.t, w));
    });
  }
  function enough(found, size) { return size > 0 && found >= (size <= 2 ? size : size - Math.floor(size / 3)); }
  function terms(point) { return [].concat.apply([], point.a); }
  function found(point, said) {
    return point.a.some(function (alt) {
      return enough(alt.filter(function (t) { return termSaid(t, said); }).length, alt.length);
    });
  }
  function spoken(answer) {
    var said = [], denied = [];
    answer.slice(0, words.max).split(/[.!?;]+(?=\s|$)|;|\n+/).forEach(function (sentence) {
      var opening = wordsOf(sentence).slice(0, 5).join(" ") + " ";
      var imagined = words.cf.some(function (o) { return opening.indexOf(o + " ") === 0; });
      sentence.split(/[,:;.!?()\[\]"“”]+|\s[-–—]\s|\bbut\b|\bwhile\b|\bhowever\b/i).forEach(function (clause) {
        var reach = 0, subject = null;
        wordsOf(clause || "").forEach(function (word) {
          var bare = word.replace(/'/g, "");
          if (NEG.has(bare) || /n't$/.test(word)) {
            if (!imagined) { reach = words.reach; if (subject) denied.push(subject); }
            return;
          }
          if (STOP.has(bare)) { subject = AUX.has(bare) ? subject : null; return; }
          if (reach) { reach--; denied.push(word); return; }
          said.push(word);
          subject = word;
        });
      });
    });
    return { said: said, denied: denied };
  }
  function names(points) { return points.map(function (p) { return "“" + p.l + "”"; }).join("; "); }
  function wordList(list) { return list.slice(0, 8).map(function (t) { return t.w; }).join(", ") || "none of its key terms"; }
  function measure(r, answer, full) {
    var below = Math.max(1, full - 1), sp = spoken(answer), said = sp.said;
    var first = wordsOf(answer.slice(0, 200))[0];
    var polarity = r.pol && first ? (YES.has(first) ? "yes" : NO.has(first) ? "no" : null) : null;
    if (polarity && polarity !== r.pol) return ["wrong", 0, "The answer is “" + r.pol + "”, not “" + polarity + "”."];
    if (!polarity && !content(wordsOf(answer)).length) return ["wrong", 0, "No answer to grade."];
    if (!r.ess.length && !r.bon.length && !r.terms.length) return ["undecided", 0, "The rubric names no words to check."];
    var premise = r.asked.filter(function (s) {
      return sp.denied.some(function (w) { return stemMatches(s, w); }) && !said.some(function (w) { return stemMatches(s, w); });
    });
    if (premise.length >= 2) return ["undecided", 0, "The answer denies what the question asks about."];
    var hit = r.terms.filter(function (t) { return termSaid(t, said); });
    var coverage = r.terms.length ? hit.length / r.terms.length : 0;
    var bonus = r.bon.filter(function (p) { return found(p, said); });
    var deniedIn = function (p) { return terms(p).some(function (t) { return termSaid(t, sp.denied) && !termSaid(t, said); }); };
    if (!r.ess.length) {
      var missingTerms = r.terms.filter(function (t) { return hit.indexOf(t) < 0; });
      if (hit.length >= 3 || (coverage >= 0.5 && hit.length >= Math.min(2, r.terms.length))) {
        return ["right", coverage >= 0.6 || hit.length >= 3 || full <= 1 ? full : Math.max(1, full - 1),
                "Right: the answer has " + wordList(hit) + "."];
      }
      if (!hit.length) return ["wrong", 0, "The answer has none of the rubric's key terms (" + wordList(missingTerms) + ")."];
      if (coverage >= 0.25 && hit.length >= 2 && full > 1) {
        return ["partial", Math.min(below, Math.max(1, Math.floor(full / 2))), "Partly right: the answer has " +
                wordList(hit) + " but not " + wordList(missingTerms) + "."];
      }
      return ["undecided", 0, "The answer has only " + wordList(hit) + " of the rubric's key terms."];
    }
    var got = r.ess.filter(function (p) { return found(p, said) || (polarity && p.e && !deniedIn(p)); });
    var missing = r.ess.filter(function (p) { return got.indexOf(p) < 0; });
    var doubtful = got.filter(function (p) { return terms(p).some(function (t) { return termSaid(t, said) && termSaid(t, sp.denied); }); });
    var denied = missing.filter(deniedIn);
    var touched = missing.filter(function (p) { return denied.indexOf(p) < 0 && terms(p).some(function (t) { return termSaid(t, said); }); });
    if (doubtful.length) return ["undecided", 0, "The answer both says and denies " + names(doubtful) + "."];
    if (!missing.length) {
      var complete = bonus.length || !r.bon.length || coverage >= 1 / 3 || full <= 1;
      return ["right", complete ? full : full - 1, "Right: the answer has the essential point " + names(got) + "."];
    }
    if (got.length && full > 1) {
      return ["partial", Math.min(below, Math.max(1, Math.floor(full * got.length / r.ess.length))),
              "Partly right: the answer has " + names(got) + " but misses " + names(missing) + "."];
    }
    if (denied.length && !got.length) return ["wrong", 0, "The answer denies the essential point " + names(denied) + "."];
    if (got.length || touched.length || hit.length) {
      return ["undecided", 0, "The check cannot tell whether the answer has " + names(touched.length ? touched : missing) + "."];
    }
    return ["wrong", 0, "The answer misses the essential point " + names(missing) + "."];
  }

  /* -- the quiz ------------------------------------------------------------------------------ */
  var LETTERS = "ABCDEFGHIJ";
  function fieldset(si, k) { return sections[si].querySelector("fieldset[data-q='" + k + "']"); }
  function readAnswer(si, k, q) {
    var set = fieldset(si, k);
    if (q.type === "short") return set.querySelector("textarea").value;
    return Array.prototype.filter.call(set.querySelectorAll("input"), function (i) { return i.checked; })
      .map(function (i) { return LETTERS[Number(i.value)]; }).join("");
  }
  function writeAnswer(si, k, q, value) {
    var set = fieldset(si, k);
    if (q.type === "short") { set.querySelector("textarea").value = value; return; }
    Array.prototype.forEach.call(set.querySelectorAll("input"), function (i) {
      i.checked = value.indexOf(LETTERS[Number(i.value)]) >= 0;
    });
  }
  function grade(q, value) {
    if (q.type !== "short") {
      var chosen = value.split("").map(function (l) { return LETTERS.indexOf(l); }).sort();
      var right = chosen.length === q.answer.length && chosen.every(function (c, i) { return c === q.answer[i]; });
      var key = q.answer.map(function (i) { return LETTERS[i]; }).join(", ");
      if (!chosen.length) return ["wrong", 0, "No option chosen: the answer is " + key + "."];
      return right ? ["right", q.points, "Right."] : ["wrong", 0, "The answer is " + key + "."];
    }
    return measure(q.rubric, value, q.points);
  }
  function gradeQuiz(si, report) {
    var scene = scenes[si], earned = 0, max = 0, open = 0;
    scene.questions.forEach(function (q, k) {
      var value = readAnswer(si, k, q);
      answers[si + "." + k] = value;
      var g = grade(q, value), feedback = $("q" + si + "-" + k + "-fb");
      var verdict = g[0] === "undecided" ? "teacher" : g[0];
      var head = { right: "✓ ", wrong: "✗ ", partial: "◐ ", teacher: "For your teacher: " }[verdict];
      var shownPoints = verdict === "teacher" ? "" : " (" + g[1] + " of " + q.points + ")";
      text(feedback, head + g[2] + shownPoints + (q.explanation ? " " + q.explanation : ""));
      feedback.className = "feedback " + verdict;
      earned += g[1];
      max += q.points;
      if (verdict === "teacher") open += 1;
      Array.prototype.forEach.call(fieldset(si, k).querySelectorAll("input,textarea"), function (i) { i.disabled = true; });
    });
    done[si] = true;
    results[si] = { earned: earned, max: max };
    var button = sections[si].querySelector(".submit"), result = sections[si].querySelector(".result");
    button.disabled = true;
    text(result, "Score: " + earned + " of " + max + (open ? " (" + open + " answer" + (open > 1 ? "s" : "") +
         " for your teacher)" : ""));
    if (report) { lms.score(); result.focus(); }
  }
  Array.prototype.forEach.call(document.querySelectorAll("form.quiz"), function (form) {
    var si = Number(form.getAttribute("data-quiz"));
    form.addEventListener("submit", function (event) { event.preventDefault(); if (!done[si]) gradeQuiz(si, true); });
    form.addEventListener("change", function () {
      scenes[si].questions.forEach(function (q, k) { answers[si + "." + k] = readAnswer(si, k, q); });
      lms.place(false);
    });
  });
  function totals() {
    var earned = 0, quizzes = 0, submitted = 0;
    scenes.forEach(function (s, si) {
      if (s.type !== "quiz") return;
      quizzes += 1;
      if (done[si]) { submitted += 1; earned += results[si].earned; }
    });
    return { earned: earned, max: data.maxPoints, quizzes: quizzes, submitted: submitted };
  }
  function summary() {
    var t = totals();
    var end = sections[sections.length - 1];
    text(end.querySelector(".mel p") || end.querySelector(".mel"), !t.quizzes ? "You have reached the end of the lesson." :
         "Your score: " + t.earned + " of " + t.max + " points" +
         (t.submitted < t.quizzes ? " (" + (t.quizzes - t.submitted) + " quiz not submitted)" : "") + ".");
    lms.reachedEnd();
  }

  /* -- SCORM 1.2: the LMS's API up the frame and opener chain -------------------------------- */
  var lms = (function () {
    var api = null, started = Date.now(), finished = false, mastery = data.mastery, ended = false;
    var committedScene = null;
    function seek(win) {
      for (var hops = 0; win && hops < 12; hops++) {
        try { if (win.API) return win.API; } catch (e) { return null; }
        if (!win.parent || win.parent === win) break;
        win = win.parent;
      }
      return null;
    }
    function find() {
      var found = seek(window);
      try { if (!found && window.opener) found = seek(window.opener); } catch (e) { found = null; }
      return found;
    }
    function set(key, value) { if (api) api.LMSSetValue(key, String(value)); }
    function get(key) { return api ? String(api.LMSGetValue(key) || "") : ""; }
    function commit() { if (api) api.LMSCommit(""); }
    function status() { return get("cmi.core.lesson_status"); }
    function pack() {
      var state = { v: 1, s: at, a: {}, d: Object.keys(done).map(Number) };
      Object.keys(answers).forEach(function (k) { state.a[k] = answers[k]; });
      var out = JSON.stringify(state);
      for (var cut = 2000; out.length > 4000 && cut >= 0; cut = cut > 0 ? Math.floor(cut / 2) : -1) {
        Object.keys(state.a).forEach(function (k) { state.a[k] = state.a[k].slice(0, cut); });
        out = JSON.stringify(state);
      }
      return out.length <= 4000 ? out : JSON.stringify({ v: 1, s: at, a: {}, d: state.d });
    }
    function time() {
      var t = (Date.now() - started) / 1000, h = Math.floor(t / 3600), m = Math.floor(t % 3600 / 60);
      var s = (t % 60).toFixed(2);
      var pad = function (n, w) { n = String(n); while (n.length < w) n = "0" + n; return n; };
      return pad(Math.min(h, 9999), 4) + ":" + pad(m, 2) + ":" + pad(s, 5);
    }
    var self = {
      start: function () {
        if (!data.scorm) return null;
        api = find();
        if (!api || String(api.LMSInitialize("")) !== "true") { api = null; return null; }
        var given = parseFloat(get("cmi.student_data.mastery_score"));
        if (!isNaN(given)) mastery = given;
        var was = status();
        if (!was || was === "not attempted") set("cmi.core.lesson_status", "incomplete");
        set("cmi.core.exit", "suspend");
        commit();
        try { return JSON.parse(get("cmi.suspend_data") || "null"); } catch (e) { return null; }
      },
      place: function (now) {
        if (!api || finished) return;
        set("cmi.core.lesson_location", String(at));
        set("cmi.suspend_data", pack());
        var scene = stops[at].si;
        if (now || scene !== committedScene) commit();  /* each commit may be a request to the LMS */
        committedScene = scene;
      },
      score: function () {
        var t = totals();
        if (!api || !t.quizzes) return;
        set("cmi.core.score.min", 0);
        set("cmi.core.score.max", 100);
        set("cmi.core.score.raw", t.max ? Math.round(100 * t.earned / t.max) : 0);
        if (t.submitted === t.quizzes) {
          set("cmi.core.lesson_status", (t.max ? 100 * t.earned / t.max : 0) >= mastery ? "passed" : "failed");
        }
        self.place(true);
      },
      reachedEnd: function () {
        if (!api || ended) return;
        ended = true;
        if (!totals().quizzes && ["passed", "failed", "completed"].indexOf(status()) < 0) {
          set("cmi.core.lesson_status", "completed");
          commit();
        }
      },
      finish: function () {
        if (!api || finished) return;
        self.place(false);
        set("cmi.core.session_time", time());
        commit();
        finished = true;
        api.LMSFinish("");
      }
    };
    return self;
  })();

  var resumed = lms.start();  /* what the LMS kept: read as untrusted (any shape, any size) */
  if (resumed && typeof resumed === "object" && !Array.isArray(resumed)) {
    var a = resumed.a && typeof resumed.a === "object" ? resumed.a : {};
    Object.keys(a).forEach(function (key) {
      var parts = key.split("."), si = Number(parts[0]), k = Number(parts[1]);
      var scene = Object.prototype.hasOwnProperty.call(scenes, si) ? scenes[si] : null;
      if (scene && scene.type === "quiz" && Object.prototype.hasOwnProperty.call(scene.questions, k) &&
          typeof a[key] === "string") {
        writeAnswer(si, k, scene.questions[k], a[key]);
        answers[key] = a[key];
      }
    });
    (Array.isArray(resumed.d) ? resumed.d : []).forEach(function (si) {
      if (typeof si === "number" && scenes[si] && scenes[si].type === "quiz" && !done[si]) gradeQuiz(si, false);
    });
    if (typeof resumed.s === "number" && resumed.s >= 0 && resumed.s < stops.length) at = Math.floor(resumed.s);
  }
  /* read-only, for checking the page's rubric check against maic's own (tests/test_player.py) */
  window.maicRubric = Object.freeze({ measure: measure });
  window.addEventListener("pagehide", lms.finish);
  window.addEventListener("beforeunload", lms.finish);
  render(false);
})();
