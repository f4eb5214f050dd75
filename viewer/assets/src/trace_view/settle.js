// -- settling on screen: the pane fitted and landed on its story again while the page lays itself out ---------
// The app may still be laying itself out around the view: until the reader touches anything, re-fit the pane
// and land on the story again as the layout settles. A resize re-wraps the lines: fit the pane again and,
// unless the reader has scrolled it, land on its story again (a search hit's marked tokens stay on screen).
import {storyOf} from "./place.js";
/** @import {View} from "./mount.js" */

/** @param {View} v */
export function settleLayout(v) {
  const {view, box, pane, st} = v;
  let touched = false;
  for (const ev of ["pointerdown", "wheel", "keydown", "touchstart"]) view.addEventListener(ev, () => { touched = true; }, {once: true, passive: true});
  // A search hit's marks (a link's `found=`) are brought into the window too, until the reader touches anything.
  const showFound = () => {
    const t = st.found && st.turn === st.foundTurn && !touched ? box.querySelector(".t.tv-found") : null;
    if (t) t.scrollIntoView({block: "nearest"});
  };
  const story = () => storyOf(v.O, st, v.trainer);
  for (const ms of [250, 800, 2000]) setTimeout(() => { if (!touched && !view.classList.contains("present")) { pane.fit(true); pane.goTo(story() || 0).then(showFound); } }, ms);
  // One listener per mount, retired with the view.
  let resizing = 0;
  const onResize = () => {
    if (!view.isConnected) { window.removeEventListener("resize", onResize); return; }
    cancelAnimationFrame(resizing);
    resizing = requestAnimationFrame(() => { pane.fit(true); pane.reland(story()).then(showFound); });
  };
  window.addEventListener("resize", onResize);
}
