#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""console_browser.py - `ledgerctl console` in a real browser (headless
Chromium through chromium-driver), called by console_browser.sh while a
target keeps calling in case CASE:

  console_browser.py URL CASE SCREENSHOT PROFILE_DIR

Opens the printed URL, then checks, one rule a line (`ok - NAME` or
`not ok - NAME: detail`): the token leaves the address bar, the cookie's
flags, the case list, the case page gaining rows live, the plots drawn,
a row's JSON on demand, missing results highlighted, no console errors.
Saves a screenshot.  Exits 1 when a rule failed, 77 when no browser.
"""
import sys
import time

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    print("SKIP: python3-selenium missing")
    sys.exit(77)

failed = 0


def report(name, good, detail=""):
    global failed
    if good:
        print("ok - " + name)
    else:
        failed += 1
        print("not ok - %s: %s" % (name, detail))


def wait_for(fn, seconds=20):
    end = time.time() + seconds
    last = None
    while time.time() < end:
        try:
            last = fn()
            if last:
                return last
        except Exception as e:  # the page is re-rendering
            last = e
        time.sleep(0.2)
    return None


def main():
    url, case, shot, profile = sys.argv[1:5]
    opts = Options()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--user-data-dir=" + profile, "--window-size=1280,1100"):
        opts.add_argument(flag)
    opts.binary_location = "/usr/bin/chromium"
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        drv = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    except Exception as e:
        print("SKIP: chromium does not start: %s" % str(e).splitlines()[0])
        sys.exit(77)
    try:
        drv.set_page_load_timeout(30)
        drv.get(url)
        base = url.split("/?", 1)[0] + "/"
        report("token_leaves_the_address_bar", drv.current_url == base,
               drv.current_url)

        cookies = {c["name"]: c for c in drv.get_cookies()}
        c = cookies.get("ledgerfs_console", {})
        report("cookie_is_httponly_samesite_strict_path_root",
               c.get("httpOnly") is True and c.get("sameSite") == "Strict"
               and c.get("path") == "/", c)
        report("cookie_is_not_readable_by_script",
               "ledgerfs_console" not in drv.execute_script("return document.cookie"))

        # The list is re-drawn live: find and click in one try, retried.
        def open_case():
            links = [a for a in drv.find_elements(By.CSS_SELECTOR, "#cases a")
                     if a.text == case]
            if links:
                links[0].click()
            return bool(links)
        link = wait_for(open_case)
        report("case_list_shows_the_case", bool(link))
        if not link:
            drv.get(base + "#/case/" + case)

        def rows():
            return int(drv.find_element(By.ID, "case-rows").text)

        def calls():
            return len(drv.find_elements(By.CSS_SELECTOR, "#calls tr.call"))

        first = wait_for(lambda: rows() > 0 and calls() > 0 and (rows(), calls()))
        report("case_page_shows_rows_and_calls", bool(first), first)
        grown = first and wait_for(lambda: rows() > first[0] + 2 and calls() > first[1] and (rows(), calls()), 30)
        report("case_page_gains_rows_live_while_the_target_calls", bool(grown),
               "%s then %s" % (first, grown))

        def drawn():
            rate = drv.find_elements(By.CSS_SELECTOR, "#plot-rate path.rate")
            bars = drv.find_elements(By.CSS_SELECTOR, "#plot-modes rect")
            return rate and rate[0].get_attribute("d").count("L") >= 1 and len(bars) > 0
        report("plots_are_drawn", bool(wait_for(drawn)))

        report("missing_results_are_highlighted",
               bool(wait_for(lambda: drv.find_elements(By.CSS_SELECTOR, "#calls tr.call.missing"))))
        report("turn_boundaries_are_shown",
               bool(wait_for(lambda: len(drv.find_elements(By.CSS_SELECTOR, "#calls tr.turn")) >= 2)))

        # The row's JSON on demand: click a call, its rows appear as text.
        def open_row():
            drv.find_elements(By.CSS_SELECTOR, "#calls tr.call")[1].click()
            return bool(drv.find_elements(By.CSS_SELECTOR, "#calls tr.detail"))
        wait_for(open_row)
        pre = wait_for(lambda: [p.text for p in drv.find_elements(By.CSS_SELECTOR, "#calls tr.detail pre")
                                if '"phase": "decision"' in p.text])
        report("a_call_shows_its_row_json_on_demand", bool(pre))

        verify = wait_for(lambda: drv.find_element(By.ID, "case-verify").text)
        report("verify_status_is_shown", bool(verify) and verify.startswith(("ok", "checking")), verify)

        time.sleep(0.5)
        drv.save_screenshot(shot)
        logs = drv.get_log("browser")
        errors = [l for l in logs if l.get("level") == "SEVERE"]
        report("no_console_errors", not errors, errors[:3])
        warnings = [l for l in logs if "Content Security Policy" in l.get("message", "")]
        report("no_content_security_policy_violations", not warnings, warnings[:3])
    finally:
        drv.quit()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
