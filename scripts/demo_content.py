"""The prose of streamrag's demo set: 32 questions and their pages, written for streamrag.

Everything here is original text (MIT, like the rest of streamrag). Companies, teams,
bands, films and people are invented; the few facts about the real world (boiling
point of water, the Nile, moons of the planets, time zones) are common knowledge.

Each page has its own specific paragraphs (``body``) plus ``filler`` paragraphs drawn
from the domain's bank below, in which ``{e}`` becomes the page's ``entity``. The
builder (``build_demo.py``) wraps all of it in realistic HTML.
"""

from __future__ import annotations

# -- filler banks: general paragraphs a page of that kind would carry --------------------
FILLER: dict[str, list[str]] = {
    "finance": [
        "Shares of {e} have drawn steady interest from institutional investors over the past year. Fund managers who hold the stock describe it as a core position rather than a trade, and several of them said in recent interviews that they were more focused on the balance sheet than on any single quarter.",
        "Like many mid-sized companies, {e} has spent the last two years trimming costs that crept in during the pandemic. Travel budgets were cut, two regional offices were consolidated, and several supplier contracts signed when prices were at their peak were renegotiated.",
        "Analysts remain divided on how much growth is left in the business. The more cautious camp argues that the easy gains are behind {e}, while the optimists point to new product lines and a sales team that was rebuilt from the ground up in the last eighteen months.",
        "The company reports on a calendar-year basis and usually publishes quarterly figures about four weeks after each quarter closes. The full filings, including the notes to the financial statements, are posted in the investor relations section of the {e} website.",
        "Debt levels at {e} are modest by industry standards. Most of the borrowing is at fixed rates, which has protected the company from the sharp rise in interest rates that squeezed competitors carrying larger variable-rate loans.",
        "Not every investor is convinced. A short report from an independent research firm questioned the way {e} books revenue from multi-year service agreements, although the company rejected the criticism and its auditors have not raised any concerns.",
        "Employees at {e} generally give the company good marks on workplace review sites, citing flexible schedules and a management team described as approachable. Pay is a recurring complaint, particularly among engineers who say they could earn more at larger rivals.",
        "The stock is included in several small-cap and mid-cap indexes, so a meaningful share of its daily trading volume comes from passive funds rebalancing their holdings rather than from investors taking a view on the company itself.",
        "Currency movements have been a modest headwind. Roughly a quarter of sales at {e} are made outside the United States, and the strong dollar shaved a few percentage points off reported growth in the most recent fiscal year.",
        "Board changes have been limited. Two long-serving directors retired last spring and were replaced by executives with backgrounds in software and supply-chain management, a move shareholders broadly welcomed at the annual meeting.",
        "For retail investors the main question is valuation. At current prices {e} trades at a premium to the broader market, which leaves little room for disappointment if growth slows or margins come under pressure.",
        "The company holds a conference call with analysts after each earnings release. Recordings and transcripts are usually posted within a day, and the question-and-answer portion tends to focus on pricing, hiring plans and the outlook for the next two quarters.",
    ],
    "sports": [
        "{e} spent much of the offseason reshaping the roster, trading away two veterans and signing a pair of younger players who are expected to grow into bigger roles. The coaching staff has been open about the fact that the plan is built around the next three seasons, not just the next one.",
        "Attendance has been strong. Home games regularly sell out, and the supporters' section behind the north end has become known for its banners and for singing through the entire second half, win or lose.",
        "Injuries have been the recurring theme. At one point in midseason {e} had five regulars in the training room, and the medical staff was forced to rethink how it manages workloads during stretches of back-to-back games.",
        "Local radio commentators have praised the defensive structure the team has shown this year. Opponents are taking fewer high-percentage shots, and the players say the improvement comes from hours of film study rather than from any change in personnel.",
        "Ticket prices rose for the second straight year, a decision that drew criticism from longtime season ticket holders. The front office said the increase was needed to cover rising travel costs and the renovation of the practice facility.",
        "Statistics on this page are compiled from official league scoresheets. Totals include regular-season games only unless stated otherwise; playoff figures are listed separately in the tables further down.",
        "The rivalry between {e} and its neighbors across the river dates back decades. Meetings between the two sides tend to be tight, physical affairs, and more than half of their games over the last ten years were decided by a single score.",
        "Youth development remains a priority. The club runs academy teams in four age groups, and three players from the current senior squad came through that system after joining as teenagers.",
        "Television ratings for the league have climbed steadily since a new broadcast agreement moved several marquee games to prime time. Executives credit the deal with bringing in a younger audience that follows the sport mostly through highlights on social media.",
        "Fans who want to follow along can find live scores, box scores and play-by-play data on the league's official site. Historical records going back to the league's founding are kept in the archive section.",
        "Veterans have spoken about the importance of the locker room culture at {e}. Several said the atmosphere changed for the better after the team began holding weekly meetings where younger players are encouraged to speak up.",
        "Travel is a challenge in a league that spans three time zones. Teams on the western edge of the map log the most miles, and coaches have repeatedly asked the league to cluster road games to cut down on overnight flights.",
    ],
    "music": [
        "{e} built a following the old-fashioned way, by playing small clubs and college towns for years before any label paid attention. Fans who saw those early shows still talk about how loud and loose they were.",
        "Critics have often compared the sound of {e} to the guitar pop of the late eighties, though the musicians themselves tend to name jazz records and film scores when asked about their influences.",
        "Most of the songs are written on an acoustic guitar or an old upright piano and only take shape once everyone gets into a rehearsal room. Arrangements change constantly, and some tracks are recorded in several versions before one is chosen.",
        "Vinyl editions of the records have become collectors' items. The first pressings were limited to a few thousand copies, and colored variants now sell for several times their original price on resale sites.",
        "Streaming numbers tell part of the story. A handful of songs by {e} have passed tens of millions of plays, but the catalog as a whole is driven by listeners who return to the albums from start to finish.",
        "The live show has grown with the audience. Recent tours added a horn section and a rotating cast of guest singers, and setlists change every night, which has encouraged fans to travel to several dates.",
        "Interviews with {e} are rare. The preference has always been to let the records speak for themselves, and several offers to appear on late-night television have been turned down.",
        "Album artwork has always been handled by friends rather than by a label's design team. The covers are mostly photographs taken on film, with hand-lettered titles added afterward.",
        "The relationship with the first record label ended on good terms. The musicians have said they simply wanted more control over release schedules and the freedom to put out shorter records between full-length albums.",
        "Reviewers were not always kind. Early notices called the songwriting promising but uneven, and one magazine described the debut as a collection of great choruses waiting for verses to match.",
        "Side projects are common. Over the years the people around {e} have released solo records, produced albums for younger artists and written music for documentaries and radio plays.",
    ],
    "movie": [
        "The production of {e} was not without difficulties. Weather delays pushed the shooting schedule back by several weeks, and at one point the crew had to rebuild an entire set after a storm damaged the original.",
        "Critics praised the cinematography in particular. Long, patient shots of landscapes and empty rooms give {e} a quiet, deliberate rhythm that some viewers found hypnotic and others found slow.",
        "The score was composed by a longtime collaborator of the director and recorded with a small string ensemble. Several reviewers singled it out as the emotional backbone of the film.",
        "Audience reactions at the premiere were enthusiastic, and the film picked up distribution deals in several territories within days of its first screening.",
        "Casting took longer than expected. The producers reportedly auditioned more than two hundred actors for the lead roles before settling on a mix of established names and newcomers.",
        "{e} is currently available on several streaming services and on physical media. The home release includes a commentary track, deleted scenes and a short documentary about the making of the film.",
        "Some viewers have criticized the ending of {e} as too ambiguous, while others consider it the strongest part of the film. Online forums still host long threads debating what the final scene means.",
        "Box office figures on this page come from industry tracking services and are not adjusted for inflation. Figures for international markets may be revised as distributors report final numbers.",
        "The screenplay went through several drafts. Early versions were set in a different decade and had a larger cast of characters, most of whom were cut as the story narrowed to its central relationship.",
        "Costume and production design drew on archival photographs, and many props were sourced from antique shops and estate sales rather than built from scratch.",
        "Festival audiences responded well, and {e} won an audience award at a regional festival before opening more widely later in the year.",
    ],
    "open": [
        "Questions like this one come up often in classrooms and at trivia nights, and the short answer usually hides a longer story about how the measurement was made and who made it.",
        "Reference works do not always agree on the details. Differences in measurement methods, rounding and the date of the source can all produce slightly different figures for what looks like the same fact.",
        "Teachers often use {e} to introduce students to the idea that scientific knowledge is revised over time as better instruments and new observations become available.",
        "If you want to check the figure yourself, a good place to start is a recent edition of a standard reference book or the website of a national scientific agency, both of which cite their sources.",
        "Visitors often say that the numbers do not prepare you for the real thing. Seeing it in person gives a sense of scale that no table of statistics can capture.",
        "The topic has a long history in popular culture as well, turning up in schoolbooks, documentaries and quiz shows for generations.",
        "Our editors review this page regularly and update it when new information is published. If you spot an error, use the feedback link at the bottom of the page to let us know.",
        "Many readers arrive here after a quick search and want a one-line answer, so we put the key fact near the top. The sections below explain the background for those who want more detail.",
        "Local historians have collected stories about the place for more than a century, and many of them are gathered in a small museum near the town center.",
        "Members of our community forum contributed many of the details on this page. Answers are voted on by readers, and the most helpful ones appear first.",
    ],
}

# Site-wide paragraphs any page may carry.
GENERAL: list[str] = [
    "Corrections: an earlier version of this page misstated a date in the third paragraph. The error has been fixed, and we regret any confusion it may have caused.",
    "Sign up for our free weekly newsletter to get the most-read stories of the week in your inbox every Sunday morning. You can unsubscribe at any time with a single click.",
    "About this site: we are a small team of editors and contributors who have been publishing since 2006. We are funded by readers and by advertising, and we never accept payment for coverage.",
    "Editorial standards: every article is checked by a second editor before publication. When we rely on a single source we say so, and we link to original documents whenever we can.",
    "Accessibility: we want this site to be usable by everyone. If you have trouble reading any page, including the tables and charts, please contact us and we will help.",
    "Some links on this page are affiliate links. If you buy something through one of them we may earn a small commission, at no extra cost to you. This never influences what we write.",
    "Comments are moderated and may take a few hours to appear. Please keep the discussion civil and on topic; posts that include personal attacks or spam will be removed.",
    "Want to reuse this article? Short quotes with a link back to this page are always welcome. For longer extracts or reprints, get in touch with our syndication desk.",
]

# Comments and asides any site may show (visible text, not about anything in particular).
COMMENTS: list[str] = [
    "Great write-up, thanks. I had been looking for a clear summary of this for a while.",
    "I think you are missing some context here, but the numbers look right to me.",
    "Bookmarked. Would love to see a follow-up piece once the next set of figures comes out.",
    "This matches what I remember, although my memory is not what it used to be.",
    "Can someone explain the second table? The columns seem to be in a different order than the text.",
    "Came here from a search and found exactly what I needed. Appreciate it.",
]

# Sites: name, host, navigation labels, a line of footer text and, for sites that are not
# about the question's domain, the filler bank their pages draw from.
SITES: dict[str, dict] = {
    "marketwire": {
        "name": "Marketwire Daily",
        "host": "marketwire-daily.example",
        "nav": ["Markets", "Companies", "Earnings", "Economy", "Personal Finance", "Opinion"],
        "footer": "Market data delayed at least 15 minutes. Marketwire Daily is an independent publication.",
    },
    "ledger": {
        "name": "The Ledger Review",
        "host": "ledgerreview.example",
        "nav": ["News", "Analysis", "Dividends", "IPOs", "Newsletters"],
        "footer": "The Ledger Review does not provide investment advice.",
    },
    "stockpulse": {
        "name": "StockPulse",
        "host": "stockpulse.example",
        "nav": ["Quotes", "Screeners", "Watchlist", "Calendar", "Help"],
        "footer": "Quotes are provided for information only and may be delayed.",
    },
    "openpedia": {
        "name": "Openpedia",
        "host": "openpedia.example",
        "nav": ["Main page", "Contents", "Random article", "About", "Contact"],
        "footer": "Text is available under an open license; additional terms may apply.",
    },
    "courtside": {
        "name": "Courtside Report",
        "host": "courtsidereport.example",
        "nav": ["Scores", "Schedule", "Standings", "Teams", "Podcasts", "Video"],
        "footer": "Courtside Report covers professional and college sports.",
    },
    "statsvault": {
        "name": "StatsVault",
        "host": "statsvault.example",
        "nav": ["Players", "Teams", "Seasons", "Leaders", "Records"],
        "footer": "Data compiled from official scoresheets. Corrections welcome.",
    },
    "soundcheck": {
        "name": "Soundcheck Weekly",
        "host": "soundcheckweekly.example",
        "nav": ["News", "Reviews", "Interviews", "Tours", "Lists"],
        "footer": "Soundcheck Weekly is reader-supported.",
    },
    "vinylnotes": {
        "name": "Vinyl Notes Forum",
        "host": "vinylnotes.example",
        "nav": ["Forums", "New posts", "Members", "Marketplace", "Rules"],
        "footer": "Posts reflect the views of their authors only.",
    },
    "reelreport": {
        "name": "Reel Report",
        "host": "reelreport.example",
        "nav": ["Movies", "Box Office", "Reviews", "Awards", "Trailers"],
        "footer": "Reel Report covers film and television.",
    },
    "cinebase": {
        "name": "Cinebase",
        "host": "cinebase.example",
        "nav": ["Films", "People", "Awards", "Lists", "Sign in"],
        "footer": "Cinebase is a community-edited film database.",
    },
    "answerhub": {
        "name": "AnswerHub",
        "host": "answerhub.example",
        "nav": ["Questions", "Topics", "Ask", "Leaderboard"],
        "footer": "AnswerHub answers are written by members of the community.",
    },
    "sciencedesk": {
        "name": "Everyday Science Desk",
        "host": "sciencedesk.example",
        "nav": ["Physics", "Earth", "Space", "Biology", "Ask a Scientist"],
        "footer": "Everyday Science Desk explains science for curious readers.",
    },
    "cityguide": {
        "name": "Regional City Guide",
        "host": "cityguide.example",
        "bank": "open",
        "nav": ["Cities", "Things to do", "Services", "Events", "Maps"],
        "footer": "Information is checked regularly but may change without notice.",
    },
}

# -- the questions ---------------------------------------------------------------------------
# Page keys: site, title, body (paragraphs), filler (how many bank paragraphs); optional:
# entity (fills {e}; without it only paragraphs without {e} are used), bank (another
# domain's filler bank), long (every fitting paragraph of the bank and all site-wide
# ones), lead (the body comes first), snippet, empty (page_result ""), modified
# (Last-Modified header), comments (how many).
QUESTIONS: list[dict] = [
    # ================================ finance ================================
    {
        "slug": "acme-robotics-q4-revenue",
        "domain": "finance",
        "question_type": "simple",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "03/05/2024, 09:12:44 PT",
        "query": "acme robotics revenue for the fourth quarter of 2023",
        "answer": "$412 million",
        "alt_ans": ["412 million dollars"],
        "pages": [
            {
                "site": "marketwire",
                "title": "Acme Robotics reports fourth-quarter 2023 results",
                "entity": "Acme Robotics",
                "filler": 2,
                "lead": True,
                "modified": "Wed, 07 Feb 2024 13:30:00 GMT",
                "body": [
                    "Acme Robotics on Tuesday reported revenue of $412 million for the fourth quarter of 2023, up 18 percent from the same quarter a year earlier. Demand for Acme Robotics picking arms continued to outpace the company's own forecasts, and net income for the quarter was $37 million.",
                    "For the full year, revenue came to $1.49 billion. Chief executive Dana Whitlock said orders from grocery distributors had been especially strong in the final months of the year and that the backlog entering 2024 was the largest in the company's history.",
                    "The company guided for first-quarter revenue between $380 million and $395 million, reflecting the usual seasonal slowdown after the holiday shipping peak.",
                ],
            },
            {
                "site": "ledger",
                "title": "Acme Logistics posts record fourth quarter on strong freight rates",
                "entity": "Acme Logistics",
                "filler": 2,
                "body": [
                    "Acme Logistics, the trucking and freight brokerage group that shares a name but no ownership with the robotics maker, said revenue for the fourth quarter of 2023 rose to $958 million. The company credited higher spot rates in November and December and a new contract with a national home-improvement chain.",
                    "Executives warned that freight volumes usually soften in the first quarter and that fuel costs remain the largest uncertainty for 2024.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Acme Robotics",
                "entity": "Acme Robotics",
                "filler": 2,
                "body": [
                    "Acme Robotics is an American manufacturer of industrial robots based in Columbus, Ohio. The company was founded in 2009 by engineers Dana Whitlock and Pieter Haas and went public in 2017. Its main products are robotic picking arms and autonomous carts used in warehouses and distribution centers.",
                    "The company sells mainly to retailers, grocery wholesalers and parcel carriers. It employs about 3,100 people and operates two factories, one in Ohio and one in Monterrey, Mexico.",
                ],
            },
            {
                "site": "marketwire",
                "title": "Warehouse automation stocks: what to watch in 2024",
                "entity": "Stellar Automation",
                "filler": 3,
                "long": True,
                "body": [
                    "Warehouse automation has been one of the brighter corners of the industrial sector. Acme Robotics reported third-quarter 2023 revenue of $388 million, and rivals such as Stellar Automation and Brightline Systems have also posted double-digit growth as retailers try to reduce their dependence on seasonal labor.",
                    "The risk for investors is that orders are lumpy. A single large customer delaying a rollout can move a quarter's revenue by tens of millions of dollars, and several companies in the group have missed estimates for exactly that reason.",
                ],
            },
            {
                "site": "stockpulse",
                "title": "ACMR stock price and quote - Acme Robotics Inc.",
                "entity": "Acme Robotics",
                "filler": 1,
                "body": [
                    "Acme Robotics Inc. (ACMR) closed at $64.20 on March 4, 2024, up 1.3 percent on the day. The stock has a 52-week range of $41.75 to $68.90 and a market value of about $4.1 billion.",
                    "Next earnings date: early May 2024 (estimated). Analyst consensus: 9 buy, 4 hold, 1 sell.",
                ],
            },
        ],
    },
    {
        "slug": "halvorsen-energy-close",
        "domain": "finance",
        "question_type": "simple_w_condition",
        "static_or_dynamic": "real-time",
        "split": 0,
        "query_time": "03/04/2024, 07:45:10 PT",
        "query": "what was the closing price of halvorsen energy stock on march 1, 2024?",
        "answer": "$38.12",
        "alt_ans": [],
        "pages": [
            {
                "site": "stockpulse",
                "title": "HVEN stock quote - Halvorsen Energy Corp.",
                "entity": "Halvorsen Energy",
                "filler": 1,
                "modified": "Tue, 27 Feb 2024 21:05:00 GMT",
                "body": [
                    "Halvorsen Energy Corp. (HVEN) last closed at $37.45 on February 27, 2024, down 0.8 percent. Day range $37.10 to $37.96; volume 2.4 million shares. The 52-week range is $29.80 to $41.35.",
                    "Dividend yield: 3.9 percent. Next ex-dividend date: March 14, 2024.",
                ],
            },
            {
                "site": "marketwire",
                "title": "Halvorsen Energy shares slide after refinery outage",
                "entity": "Halvorsen Energy",
                "filler": 3,
                "body": [
                    "Shares of Halvorsen Energy fell nearly 4 percent on Thursday, February 22, closing at $36.90, after the company said an unplanned outage at its Gulf Coast refinery would cut throughput for at least two weeks.",
                    "The company said repairs were under way and that it did not expect the outage to affect its full-year production targets. Several analysts said the drop looked like an overreaction.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Halvorsen Energy",
                "entity": "Halvorsen Energy",
                "filler": 3,
                "body": [
                    "Halvorsen Energy is an American oil refining and fuel distribution company headquartered in Houston, Texas. It was founded in 1962 as a regional fuel wholesaler by the Halvorsen family and became a public company in 1988.",
                    "The company operates two refineries and a network of roughly 900 branded service stations in the southern United States.",
                ],
            },
            {
                "site": "ledger",
                "title": "Analyst raises Halvorsen Energy price target to $45",
                "entity": "Halvorsen Energy",
                "filler": 2,
                "body": [
                    "An analyst at Brookfield Crane Securities raised the price target on Halvorsen Energy to $45 from $42, citing wider refining margins and the company's plan to buy back up to $500 million of stock this year.",
                ],
            },
            {
                "site": "ledger",
                "title": "Halvorsen Shipping orders four new tankers",
                "entity": "Halvorsen Shipping",
                "filler": 2,
                "body": [
                    "Halvorsen Shipping, the Norwegian tanker operator that is unrelated to the Texas refiner, said it ordered four medium-range product tankers for delivery in 2026. Its shares rose 2 percent in Oslo.",
                ],
            },
        ],
    },
    {
        "slug": "brightwater-kestrel-employees",
        "domain": "finance",
        "question_type": "comparison",
        "static_or_dynamic": "slow-changing",
        "split": 0,
        "query_time": "02/19/2024, 16:02:37 PT",
        "query": "which company had more employees at the end of 2022, brightwater foods or kestrel outdoor?",
        "answer": "Brightwater Foods",
        "alt_ans": ["brightwater"],
        "pages": [
            {
                "site": "ledger",
                "title": "Brightwater Foods 2022 annual report: the highlights",
                "entity": "Brightwater Foods",
                "filler": 2,
                "body": [
                    "At December 31, 2022, Brightwater Foods employed about 12,400 people across its bakeries, distribution centers and head office, compared with 11,900 a year earlier. The company said most of the new hires worked in its frozen foods division.",
                    "Revenue for 2022 rose 9 percent to $3.2 billion, helped by price increases that the company said were needed to offset higher costs for flour, packaging and transport.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Kestrel Outdoor",
                "entity": "Kestrel Outdoor",
                "filler": 3,
                "body": [
                    "Kestrel Outdoor is a maker of tents, backpacks and outdoor clothing based in Boise, Idaho. Founded in 1994, the company sells through its own stores and through sporting goods retailers. Kestrel Outdoor had about 4,800 employees at the end of 2022.",
                ],
            },
            {
                "site": "marketwire",
                "title": "Two consumer companies, two very different years",
                "entity": "Kestrel Outdoor",
                "filler": 2,
                "body": [
                    "Kestrel Outdoor and Brightwater Foods both went public in the same month of 2015, and investors have compared them ever since. Kestrel grew faster at first, but Brightwater, which is almost three times the size by headcount, has delivered steadier returns.",
                    "The two companies also differ in how they treat their workforces: Brightwater unionized its bakeries in the nineties, while Kestrel relies heavily on seasonal staff in its stores.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Is Kestrel Outdoor a good place to work?",
                "entity": "Kestrel Outdoor",
                "filler": 1,
                "comments": 3,
                "body": [
                    "I worked in one of their stores for two summers. The discount on gear is great and managers were fair, but hours are cut hard after the holidays. Corporate jobs in Boise seem more stable from what friends tell me.",
                ],
            },
            {
                "site": "marketwire",
                "title": "Brightwater Foods recalls frozen pizzas over labeling error",
                "entity": "Brightwater Foods",
                "filler": 2,
                "body": [
                    "Brightwater Foods said it was recalling about 40,000 frozen pizzas because the packaging did not list a milk ingredient. No illnesses had been reported, the company said.",
                ],
            },
        ],
    },
    {
        "slug": "norland-payments-acquisitions",
        "domain": "finance",
        "question_type": "aggregation",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "03/11/2024, 11:20:05 PT",
        "query": "how many acquisitions did norland payments complete between 2019 and 2023?",
        "answer": "7",
        "alt_ans": ["seven"],
        "pages": [
            {
                "site": "ledger",
                "title": "Inside Norland Payments' buying spree",
                "entity": "Norland Payments",
                "filler": 3,
                "body": [
                    "Between 2019 and 2023 Norland Payments completed seven acquisitions, spending a combined $2.3 billion. The largest was the 2021 purchase of Fennick Card Services for $940 million; the smallest was a $35 million deal for a fraud-detection startup in 2020.",
                    "Chief financial officer Ruth Amari said the company would pause large deals in 2024 to focus on integrating the businesses it already owns.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Norland Payments",
                "entity": "Norland Payments",
                "filler": 3,
                "body": [
                    "Norland Payments is a payment processing company based in Minneapolis. It provides card acceptance, point-of-sale software and payroll services to small and mid-sized businesses.",
                    "Acquisitions: Fennick Card Services (2021), Quillpay (2019), Sentry Ledger (2020), Harbor POS (2020), Trellis Payroll (2022), Amberline Gateway (2022) and Cobalt Invoice (2023).",
                ],
            },
            {
                "site": "marketwire",
                "title": "Norland Payments to buy Cobalt Invoice",
                "entity": "Norland Payments",
                "filler": 2,
                "body": [
                    "Norland Payments agreed to buy invoicing software maker Cobalt Invoice for $120 million in cash, its second deal in as many years. The transaction is expected to close in the third quarter of 2023.",
                ],
            },
            {
                "site": "ledger",
                "title": "Norland Bank reports steady deposit growth",
                "entity": "Norland Bank",
                "filler": 3,
                "body": [
                    "Norland Bank, a regional lender that is not affiliated with the payments company, said deposits grew 4 percent in 2023. The bank has made two acquisitions of smaller community banks since 2019.",
                ],
            },
            {
                "site": "stockpulse",
                "title": "NRLP stock quote - Norland Payments Inc.",
                "entity": "Norland Payments",
                "filler": 1,
                "body": [
                    "Norland Payments Inc. (NRLP) closed at $88.15. Market value: $9.6 billion. Price-to-earnings ratio: 24. Shares outstanding: 109 million.",
                ],
            },
        ],
    },
    {
        "slug": "orbit-thermostat-ticker",
        "domain": "finance",
        "question_type": "multi-hop",
        "static_or_dynamic": "static",
        "split": 1,
        "query_time": "02/27/2024, 19:48:51 PT",
        "query": "what is the ticker symbol of the company that makes the orbit smart thermostat?",
        "answer": "HLXT",
        "alt_ans": [],
        "pages": [
            {
                "site": "answerhub",
                "title": "Orbit smart thermostat review: quiet, clever and easy to install",
                "filler": 1,
                "comments": 2,
                "body": [
                    "The Orbit smart thermostat is made by Helix Thermal, a Denver company better known for commercial heating controls. Installation took me about twenty minutes, and the app walked me through every wire.",
                    "After a month the thermostat had learned our schedule well enough that I stopped touching it. The only complaint is that the display is hard to read in direct sunlight.",
                ],
            },
            {
                "site": "stockpulse",
                "title": "HLXT stock quote - Helix Thermal Corp.",
                "entity": "Helix Thermal",
                "filler": 1,
                "body": [
                    "Helix Thermal Corp. (HLXT) closed at $27.40. The company designs heating, ventilation and air-conditioning controls for homes and commercial buildings, including the Orbit line of smart thermostats.",
                ],
            },
            {
                "site": "marketwire",
                "title": "Smart thermostats compared: Orbit, Nestor and Climo",
                "entity": "Nestor Home",
                "filler": 2,
                "body": [
                    "The smart thermostat market is crowded. Nestor Home, which trades as NSTR, leads on features, while Climo is the cheapest option. The Orbit is the quietest of the three and the only one with a built-in humidity sensor.",
                ],
            },
            {
                "site": "ledger",
                "title": "Helix Thermal raises outlook as thermostat sales climb",
                "entity": "Helix Thermal",
                "filler": 3,
                "body": [
                    "Helix Thermal raised its full-year revenue forecast after sales of its consumer thermostats grew 31 percent in the quarter. The company said retailers had expanded shelf space for the Orbit ahead of the winter season.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Smart thermostat",
                "filler": 2,
                "body": [
                    "A smart thermostat is a thermostat that can be controlled over the internet and that adjusts heating and cooling based on schedules, occupancy or weather. Most models connect to a home's wireless network and can be operated from a phone.",
                ],
            },
        ],
    },
    {
        "slug": "crestline-dividend-average",
        "domain": "finance",
        "question_type": "post-processing",
        "static_or_dynamic": "slow-changing",
        "split": 1,
        "query_time": "03/01/2024, 10:03:12 PT",
        "query": "what was the average quarterly dividend paid by crestline utilities in 2023?",
        "answer": "$0.42",
        "alt_ans": ["42 cents"],
        "pages": [
            {
                "site": "ledger",
                "title": "Crestline Utilities dividend history",
                "entity": "Crestline Utilities",
                "filler": 2,
                "body": [
                    "Crestline Utilities paid four quarterly dividends in 2023: $0.40 per share in March, $0.42 in June, $0.42 in September and $0.44 in December. The company has raised its payout every year since 2008.",
                    "For 2024 the board has declared a first-quarter dividend of $0.44 per share, payable on March 29 to shareholders of record on March 12.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Crestline Utilities",
                "entity": "Crestline Utilities",
                "filler": 3,
                "body": [
                    "Crestline Utilities is an electric and gas utility serving about 1.2 million customers in Oregon and northern California. It is regulated by state utility commissions and owns hydroelectric, wind and natural gas power plants.",
                ],
            },
            {
                "site": "marketwire",
                "title": "Five utility stocks with growing dividends",
                "entity": "Crestline Utilities",
                "filler": 3,
                "body": [
                    "Utilities are a favorite of income investors. Crestline Utilities yields about 3.6 percent at current prices, while Summit Gas and Eastbrook Power both yield just over 4 percent.",
                ],
            },
            {
                "site": "stockpulse",
                "title": "CRSU dividend yield and payout ratio",
                "entity": "Crestline Utilities",
                "filler": 1,
                "body": [
                    "Crestline Utilities (CRSU): annual dividend $1.76 (forward). Payout ratio: 61 percent. Years of consecutive increases: 16.",
                ],
            },
            {
                "site": "marketwire",
                "title": "Crestline Water to raise rates in three counties",
                "entity": "Crestline Water",
                "filler": 2,
                "body": [
                    "Crestline Water, a small water utility in Colorado with no link to the Oregon power company, won approval to raise residential rates by 6 percent starting in July.",
                ],
            },
        ],
    },
    {
        "slug": "granite-peak-first-dividend",
        "domain": "finance",
        "question_type": "false_premise",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "02/14/2024, 08:55:21 PT",
        "query": "when did granite peak bank pay its first dividend after going public in 2021?",
        "answer": "invalid question",
        "alt_ans": [],
        "pages": [
            {
                "site": "openpedia",
                "title": "Granite Peak Bank",
                "bank": "open",
                "filler": 3,
                "body": [
                    "Granite Peak Bank is a member-owned mutual savings bank in Bozeman, Montana, founded in 1921. Because it is owned by its depositors, the bank has never issued stock and is not listed on any exchange.",
                    "The bank has twelve branches in southwestern Montana and is known for its agricultural lending.",
                ],
            },
            {
                "site": "ledger",
                "title": "Granite Ridge Bancorp declares first dividend since listing",
                "entity": "Granite Ridge Bancorp",
                "filler": 2,
                "body": [
                    "Granite Ridge Bancorp, which went public in 2021, declared its first quarterly dividend in the spring of 2022. The Colorado lender said it would pay 10 cents a share.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Banks and credit unions in Bozeman",
                "bank": "open",
                "filler": 2,
                "body": [
                    "Bozeman residents can choose from national banks, several credit unions and Granite Peak Bank, the city's oldest local lender, which has its main branch on Main Street.",
                ],
            },
            {
                "site": "marketwire",
                "title": "Mutual banks resist pressure to convert",
                "bank": "open",
                "filler": 3,
                "body": [
                    "A handful of mutual savings banks have converted to stock ownership in recent years, but many, including Granite Peak Bank, say they prefer to stay owned by their customers.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Can I buy shares of Granite Peak Bank?",
                "bank": "open",
                "filler": 1,
                "comments": 2,
                "body": [
                    "No. It is a mutual bank, so there are no shares to buy. Depositors are technically the owners. You might be thinking of Granite Ridge, which is a different bank in Colorado.",
                ],
            },
        ],
    },
    # ================================ sports ================================
    {
        "slug": "npbl-2022-champion",
        "domain": "sports",
        "question_type": "simple",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "03/08/2024, 18:22:40 PT",
        "query": "which team won the 2022 northern premier basketball league championship?",
        "answer": "Lakeshore Comets",
        "alt_ans": ["the comets"],
        "pages": [
            {
                "site": "courtside",
                "title": "Lakeshore Comets win 2022 NPBL title in six games",
                "entity": "the Lakeshore Comets",
                "filler": 3,
                "body": [
                    "The Lakeshore Comets won the 2022 Northern Premier Basketball League championship on Saturday night, beating the Pinewood Rangers 104-97 in game six of the finals. Point guard Marcus Delaney scored 31 points and was named finals most valuable player.",
                    "It was the first title in franchise history for the Comets, who had lost in the finals twice in the previous five seasons.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Northern Premier Basketball League",
                "filler": 3,
                "body": [
                    "The Northern Premier Basketball League (NPBL) is a professional basketball league founded in 1998. It has twelve teams in the United States and Canada. The regular season runs from October to April, followed by four rounds of playoffs.",
                    "Recent champions: 2019 Harbor City Hawks, 2020 season cancelled, 2021 Harbor City Hawks, 2022 Lakeshore Comets, 2023 Pinewood Rangers.",
                ],
            },
            {
                "site": "courtside",
                "title": "Pinewood Rangers finally win NPBL championship",
                "entity": "the Pinewood Rangers",
                "filler": 3,
                "body": [
                    "A year after losing to Lakeshore in the finals, the Pinewood Rangers won the 2023 Northern Premier Basketball League championship with a sweep of the Harbor City Hawks.",
                ],
            },
            {
                "site": "statsvault",
                "title": "NPBL standings and schedule",
                "empty": True,
                "filler": 0,
                "snippet": "Northern Premier Basketball League standings, schedule and results for the current season. Conference tables, streaks and home and away records for all twelve teams.",
                "body": [],
            },
            {
                "site": "courtside",
                "title": "Comets open season with new arena and old rivals",
                "entity": "the Lakeshore Comets",
                "filler": 4,
                "body": [
                    "The Lakeshore Comets moved into their new downtown arena this season. The team is coached by Elise Moreau, who took over after the championship run.",
                ],
            },
        ],
    },
    {
        "slug": "delaney-season-points",
        "domain": "sports",
        "question_type": "aggregation",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "03/02/2024, 12:40:08 PT",
        "query": "how many points did marcus delaney score in total during the 2022-23 season?",
        "answer": "1,204",
        "alt_ans": ["1204"],
        "pages": [
            {
                "site": "statsvault",
                "title": "Marcus Delaney career statistics",
                "filler": 2,
                "body": [
                    "Marcus Delaney, point guard, Lakeshore Comets. Born April 9, 1996. Height 6 ft 2 in.",
                    "Season totals (regular season): 2020-21: 64 games, 1,002 points. 2021-22: 70 games, 1,118 points. 2022-23: 72 games, 1,204 points, 6.8 assists per game. 2023-24 (in progress): 41 games, 611 points.",
                ],
            },
            {
                "site": "courtside",
                "title": "Season review: Delaney carries the Comets",
                "filler": 3,
                "long": True,
                "body": [
                    "Marcus Delaney finished the 2022-23 season with 1,204 points, third in the league behind Victor Osei and Andre Lyle. He missed only one game all year and led the Comets in minutes played.",
                ],
            },
            {
                "site": "courtside",
                "title": "Delaney scores 38 as Comets beat Hawks",
                "entity": "the Lakeshore Comets",
                "filler": 2,
                "body": [
                    "Marcus Delaney scored 38 points, including 14 in the fourth quarter, and the Lakeshore Comets beat the Harbor City Hawks 112-105 on Friday. It was Delaney's highest-scoring game of the season.",
                ],
            },
            {
                "site": "statsvault",
                "title": "Jordan Delaney career statistics",
                "filler": 2,
                "body": [
                    "Jordan Delaney, forward, Pinewood Rangers. Cousin of Marcus Delaney. Season totals (regular season): 2021-22: 55 games, 602 points. 2022-23: 68 games, 877 points.",
                ],
            },
            {
                "site": "courtside",
                "title": "The league's best scorers, ranked",
                "filler": 2,
                "body": [
                    "Victor Osei has led the league in scoring two years running. Andre Lyle is the most efficient scorer in the league, and Marcus Delaney the most durable.",
                ],
            },
        ],
    },
    {
        "slug": "ibarra-whitcombe-home-runs",
        "domain": "sports",
        "question_type": "comparison",
        "static_or_dynamic": "slow-changing",
        "split": 1,
        "query_time": "02/21/2024, 20:14:55 PT",
        "query": "who has more career home runs, tomas ibarra or dale whitcombe?",
        "answer": "Tomas Ibarra",
        "alt_ans": ["ibarra"],
        "pages": [
            {
                "site": "statsvault",
                "title": "Tomas Ibarra batting statistics",
                "filler": 2,
                "body": [
                    "Tomas Ibarra, first baseman. Career totals through the 2023 season: 1,640 games, 1,702 hits, 312 home runs, 1,015 runs batted in, .281 batting average.",
                ],
            },
            {
                "site": "statsvault",
                "title": "Dale Whitcombe batting statistics",
                "filler": 2,
                "body": [
                    "Dale Whitcombe, outfielder. Career totals through the 2023 season: 1,498 games, 1,611 hits, 247 home runs, 860 runs batted in, .294 batting average.",
                ],
            },
            {
                "site": "courtside",
                "title": "Ibarra vs. Whitcombe: the great debate",
                "filler": 3,
                "body": [
                    "Fans have argued for years about which of the two was the better hitter. Whitcombe has the higher career average and more stolen bases, but Ibarra hit for far more power.",
                ],
            },
            {
                "site": "courtside",
                "title": "Ibarra hits 300th home run",
                "filler": 2,
                "body": [
                    "Tomas Ibarra became the fourteenth player in league history to reach 300 career home runs with a two-run shot in the sixth inning on Tuesday night.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Fantasy baseball: draft Whitcombe or Ibarra in 2024?",
                "filler": 1,
                "comments": 3,
                "body": [
                    "Both are on the wrong side of thirty-five. If you need power, take the first baseman; if you need average and steals, take the outfielder. Neither should go before the eighth round.",
                ],
            },
        ],
    },
    {
        "slug": "cfa-final-stadiums",
        "domain": "sports",
        "question_type": "set",
        "static_or_dynamic": "slow-changing",
        "split": 0,
        "query_time": "01/30/2024, 14:09:33 PT",
        "query": "which stadiums have hosted the coastal football association final since 2018?",
        "answer": "Harborview Stadium, Pine Ridge Park, and Miller Field",
        "alt_ans": [],
        "pages": [
            {
                "site": "openpedia",
                "title": "Coastal Football Association final",
                "filler": 3,
                "body": [
                    "The Coastal Football Association final is the championship match of the Coastal Football Association, played each December. The host venue is chosen three years in advance.",
                    "Since 2018 the final has been played at three venues: Harborview Stadium, Pine Ridge Park, and Miller Field. Harborview Stadium has hosted it four times, the most of any ground.",
                ],
            },
            {
                "site": "courtside",
                "title": "Miller Field ready for its second final",
                "filler": 3,
                "body": [
                    "Miller Field will host the Coastal Football Association final for the second time in December. The stadium added 4,000 seats during the summer and now holds 38,500 fans.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Harborview Stadium: tickets, parking and directions",
                "filler": 2,
                "body": [
                    "Harborview Stadium sits on the waterfront, a ten-minute walk from the central station. Parking is limited on match days, and the city runs extra ferries before and after big games.",
                ],
            },
            {
                "site": "courtside",
                "title": "Coastal Rugby Association final heads to Eastgate Oval",
                "filler": 2,
                "body": [
                    "The Coastal Rugby Association final, a separate competition from the football final, will be played at Eastgate Oval. Since 2018 the rugby final has also visited Pine Ridge Park and Dunmore Road.",
                ],
            },
            {
                "site": "statsvault",
                "title": "Coastal Football Association final results",
                "filler": 1,
                "body": [
                    "2023: Port Alder 2, Seabright 1. 2022: Seabright 3, Kelham Town 0. 2021: Port Alder 1, Kelham Town 1 (Port Alder won on penalties). 2020: no final. 2019: Kelham Town 2, Rosslyn 0.",
                ],
            },
        ],
    },
    {
        "slug": "fairview-falcons-coach-birthplace",
        "domain": "sports",
        "question_type": "multi-hop",
        "static_or_dynamic": "slow-changing",
        "split": 0,
        "query_time": "02/10/2024, 09:31:17 PT",
        "query": "in what city was the head coach of the fairview falcons born?",
        "answer": "Dayton",
        "alt_ans": ["dayton, ohio"],
        "pages": [
            {
                "site": "courtside",
                "title": "Fairview Falcons coaching staff",
                "entity": "the Fairview Falcons",
                "filler": 2,
                "body": [
                    "Head coach: Rob Kessler (since 2021). Assistant coaches: Marta Quinn, Derek Oyelaran. Strength and conditioning: Paul Fenwick. The Fairview Falcons play their home games at Cedar Hill Arena.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Rob Kessler",
                "filler": 3,
                "body": [
                    'Robert "Rob" Kessler (born March 3, 1971) is an American ice hockey coach. Kessler was born in Dayton, Ohio, and played college hockey before a short professional career as a defenseman.',
                    "He became head coach of the Fairview Falcons in 2021 after six seasons as an assistant with other clubs.",
                ],
            },
            {
                "site": "courtside",
                "title": "Falcons season preview: can Kessler's system hold up?",
                "entity": "the Fairview Falcons",
                "filler": 3,
                "body": [
                    "The Falcons were the surprise of last season, and coach Rob Kessler has kept the core of that team together. The question is whether the young defense can keep up the pace.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Tom Kessler",
                "filler": 2,
                "body": [
                    "Tom Kessler (born 1968) is a retired American football coach. Born in Toledo, Ohio, he coached college teams for more than twenty years. He is not related to hockey coach Rob Kessler.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Fairview: a visitor's guide",
                "filler": 3,
                "body": [
                    "Fairview is a lakeside city of about 90,000 people. Its professional hockey team, the Falcons, draws big crowds in winter, and the old mill district is full of restaurants.",
                ],
            },
        ],
    },
    {
        "slug": "npbl-rebounds-leader",
        "domain": "sports",
        "question_type": "simple_w_condition",
        "static_or_dynamic": "fast-changing",
        "split": 1,
        "query_time": "03/06/2024, 21:03:46 PT",
        "query": "who leads the northern premier basketball league in rebounds this season?",
        "answer": "Andre Lyle",
        "alt_ans": ["lyle"],
        "pages": [
            {
                "site": "statsvault",
                "title": "NPBL leaders: rebounds per game",
                "filler": 1,
                "modified": "Wed, 06 Mar 2024 08:00:00 GMT",
                "body": [
                    "Rebounds per game, current season (minimum 30 games): 1. Andre Lyle, Harbor City Hawks, 11.8. 2. Sam Okoro, Pinewood Rangers, 10.9. 3. Felix Brandt, Lakeshore Comets, 10.2.",
                ],
            },
            {
                "site": "statsvault",
                "title": "NPBL leaders: points per game",
                "filler": 1,
                "body": [
                    "Points per game, current season: 1. Victor Osei, Westgate Miners, 28.4. 2. Andre Lyle, Harbor City Hawks, 26.1. 3. Marcus Delaney, Lakeshore Comets, 24.9.",
                ],
            },
            {
                "site": "courtside",
                "title": "Last season's leaders: Osei, Lyle and the rest",
                "filler": 2,
                "body": [
                    "Last season Victor Osei led the Northern Premier Basketball League in both scoring and rebounds, the first player to do so in a decade.",
                ],
            },
            {
                "site": "courtside",
                "title": "Lyle's double-double lifts Hawks",
                "entity": "the Harbor City Hawks",
                "filler": 3,
                "body": [
                    "Andre Lyle had 27 points and 15 rebounds, and the Harbor City Hawks held off the Comets 99-95 on Wednesday.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Andre Lyle",
                "filler": 2,
                "body": [
                    "Andre Lyle (born 1998) is a Canadian professional basketball player who plays center for the Harbor City Hawks of the Northern Premier Basketball League.",
                ],
            },
        ],
    },
    {
        "slug": "harbor-city-marathon-margin",
        "domain": "sports",
        "question_type": "post-processing",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "02/05/2024, 07:10:02 PT",
        "query": "what was the winning margin in the 2023 harbor city marathon men's race?",
        "answer": "42 seconds",
        "alt_ans": [],
        "pages": [
            {
                "site": "statsvault",
                "title": "Harbor City Marathon 2023: official results",
                "filler": 1,
                "body": [
                    "Men: 1. Daniel Kiprono 2:08:15. 2. Amare Tesfaye 2:08:57. 3. Lucas Ferreira 2:10:02. Women: 1. Helen Wambui 2:23:40. 2. Sofia Lindqvist 2:24:05. 3. Mei Tanaka 2:25:31.",
                    "Kiprono won the men's race by 42 seconds, pulling away from Tesfaye on the final climb.",
                ],
            },
            {
                "site": "courtside",
                "title": "Wambui holds on to win women's race",
                "filler": 3,
                "body": [
                    "Helen Wambui won the women's race at the 2023 Harbor City Marathon by 25 seconds, holding off a late charge from Sofia Lindqvist.",
                ],
            },
            {
                "site": "courtside",
                "title": "Harbor City Marathon 2022: Tesfaye wins in the rain",
                "filler": 2,
                "body": [
                    "In 2022 Amare Tesfaye won the men's race in heavy rain, finishing 1 minute and 10 seconds ahead of the field.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Harbor City Marathon course guide",
                "filler": 3,
                "body": [
                    "The course starts at the old customs house, loops through the harbor district and finishes in Central Park. The climb at mile 24 is the toughest part of the route.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Daniel Kiprono",
                "filler": 2,
                "body": [
                    "Daniel Kiprono (born 1995) is a Kenyan long-distance runner. He won the Harbor City Marathon in 2023, his first win at a major road race.",
                ],
            },
        ],
    },
    # ================================ music ================================
    {
        "slug": "glass-harbor-band-first-record",
        "domain": "music",
        "question_type": "multi-hop",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "02/24/2024, 22:17:03 PT",
        "query": "what year did the band that recorded the album glass harbor release their first record?",
        "answer": "2009",
        "alt_ans": [],
        "pages": [
            {
                "site": "soundcheck",
                "title": "Review: The Paper Lanterns, Glass Harbor",
                "entity": "The Paper Lanterns",
                "filler": 3,
                "body": [
                    "Glass Harbor, the third album by The Paper Lanterns, is the record where the band finally sounds as big on tape as it does on stage. Released in 2015, it was produced by Mina Okafor and recorded in a converted church in Portland.",
                ],
            },
            {
                "site": "openpedia",
                "title": "The Paper Lanterns",
                "entity": "The Paper Lanterns",
                "filler": 3,
                "long": True,
                "body": [
                    "The Paper Lanterns are an American indie rock band formed in Portland, Oregon, in 2006. Their debut album, Northbound, was released in 2009 on a small local label, followed by Low Tide Choir in 2012 and Glass Harbor in 2015.",
                ],
            },
            {
                "site": "vinylnotes",
                "title": "Paper Lanterns discography thread",
                "entity": "The Paper Lanterns",
                "filler": 1,
                "comments": 3,
                "body": [
                    "Posting the full list for anyone collecting: Northbound, Low Tide Choir, Glass Harbor, Weathervane. Plus the two live records. Original pressings of the first one are very hard to find.",
                ],
            },
            {
                "site": "soundcheck",
                "title": "Harbor Lights announce debut album",
                "entity": "Harbor Lights",
                "filler": 2,
                "body": [
                    "Harbor Lights, a new band from Halifax, will release their first record in June. The band says the album was recorded live in a single week.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Concerts this week: The Paper Lanterns at the Crystal Hall",
                "filler": 2,
                "body": [
                    "The Paper Lanterns play two nights at the Crystal Hall on Friday and Saturday. Doors open at 7 pm. Tickets start at $35.",
                ],
            },
        ],
    },
    {
        "slug": "glass-harbor-producer",
        "domain": "music",
        "question_type": "simple",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "02/26/2024, 13:44:19 PT",
        "query": "who produced the paper lanterns' album glass harbor?",
        "answer": "Mina Okafor",
        "alt_ans": ["okafor"],
        "pages": [
            {
                "site": "vinylnotes",
                "title": "Glass Harbor (2015) full credits",
                "entity": "The Paper Lanterns",
                "filler": 1,
                "body": [
                    "Glass Harbor. Recorded at St. Brendan's Hall, Portland. Produced by Mina Okafor. Engineered by Luis Aranda. Mixed by Okafor and Aranda. Mastered by Greta Voll.",
                ],
            },
            {
                "site": "soundcheck",
                "title": "Mina Okafor on making Glass Harbor",
                "filler": 3,
                "body": [
                    "Producer Mina Okafor says she spent the first week of the Glass Harbor sessions just moving microphones around the church until the room sounded right.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Northbound (album)",
                "entity": "The Paper Lanterns",
                "filler": 2,
                "body": [
                    "Northbound is the debut album by The Paper Lanterns, released in 2009. It was produced by Ed Carrow and recorded in four days.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Mina Okafor",
                "filler": 2,
                "body": [
                    "Mina Okafor (born 1981) is a Nigerian-American record producer and engineer based in Portland, Oregon. She has produced albums for The Paper Lanterns, Juniper Hale and Velvet Static.",
                ],
            },
            {
                "site": "soundcheck",
                "title": "The Paper Lanterns announce Weathervane",
                "entity": "The Paper Lanterns",
                "filler": 3,
                "body": [
                    "The Paper Lanterns will release their fourth album, Weathervane, in the fall. It is their first record produced by the band itself.",
                ],
            },
        ],
    },
    {
        "slug": "velvet-static-members",
        "domain": "music",
        "question_type": "set",
        "static_or_dynamic": "slow-changing",
        "split": 0,
        "query_time": "03/09/2024, 17:26:50 PT",
        "query": "who are the members of the band velvet static?",
        "answer": "Jonah Pike, Rosa Delgado, and Theo Brandt",
        "alt_ans": [],
        "pages": [
            {
                "site": "openpedia",
                "title": "Velvet Static",
                "entity": "Velvet Static",
                "filler": 4,
                "body": [
                    "Velvet Static is an American synth-pop trio from Austin, Texas, formed in 2011. The current lineup is Jonah Pike, Rosa Delgado, and Theo Brandt; original drummer Kyle Moss left in 2014.",
                    "The band has released four studio albums and has toured continuously since its formation, without any breaks or hiatus.",
                ],
            },
            {
                "site": "soundcheck",
                "title": "Velvet Static: the interview",
                "entity": "Velvet Static",
                "filler": 3,
                "body": [
                    "We met Rosa Delgado and Jonah Pike in a taco shop near their studio. Theo Brandt was at home with a new baby, so the two of them did most of the talking about the new record.",
                ],
            },
            {
                "site": "vinylnotes",
                "title": "Velvet Static vs. Velvet Crane - not the same band!",
                "entity": "Velvet Crane",
                "filler": 1,
                "comments": 2,
                "body": [
                    "Every week someone posts a Velvet Crane record in the Velvet Static thread. Velvet Crane is a folk duo from Leeds. Different band, different members, different everything.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Velvet Static live at the Riverside Amphitheater",
                "filler": 2,
                "body": [
                    "Velvet Static headline the Riverside Amphitheater on April 20. Support comes from Harbor Lights. Lawn tickets are $40.",
                ],
            },
            {
                "site": "soundcheck",
                "title": "Kyle Moss on life after Velvet Static",
                "filler": 2,
                "body": [
                    "Kyle Moss left Velvet Static ten years ago and now runs a recording studio in Denver. He says he is still on good terms with his former bandmates.",
                ],
            },
        ],
    },
    {
        "slug": "midnight-orchard-vs-salt-and-cedar",
        "domain": "music",
        "question_type": "comparison",
        "static_or_dynamic": "static",
        "split": 1,
        "query_time": "02/12/2024, 11:58:27 PT",
        "query": "which album is longer, midnight orchard or salt and cedar?",
        "answer": "Salt and Cedar",
        "alt_ans": [],
        "pages": [
            {
                "site": "openpedia",
                "title": "Midnight Orchard",
                "entity": "Juniper Hale",
                "filler": 2,
                "body": [
                    "Midnight Orchard is the second studio album by singer-songwriter Juniper Hale, released in 2017. It has ten tracks and a running time of 41 minutes.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Salt and Cedar",
                "entity": "Juniper Hale",
                "filler": 2,
                "body": [
                    "Salt and Cedar is the third studio album by Juniper Hale, released in 2020. With fourteen tracks and a running time of 52 minutes, it is her longest record.",
                ],
            },
            {
                "site": "soundcheck",
                "title": "Juniper Hale albums ranked",
                "entity": "Juniper Hale",
                "filler": 3,
                "body": [
                    "Salt and Cedar is the sprawling one, Midnight Orchard the tight one, and the debut is still the fan favorite. Here is how we rank all four records.",
                ],
            },
            {
                "site": "vinylnotes",
                "title": "Midnight Orchard repress - worth it?",
                "entity": "Juniper Hale",
                "filler": 1,
                "comments": 3,
                "body": [
                    "The new pressing of Midnight Orchard fits the whole album on a single disc, which makes sense for a record that short. Sound is good, a little quieter than the original.",
                ],
            },
            {
                "site": "soundcheck",
                "title": "Cedar and Salt: the band, not the album",
                "entity": "Cedar and Salt",
                "filler": 2,
                "body": [
                    "Cedar and Salt, a bluegrass quartet from Kentucky, say they are tired of being confused with a certain singer-songwriter's album. Their new record comes out next month.",
                ],
            },
        ],
    },
    {
        "slug": "lila-voss-meridian-awards",
        "domain": "music",
        "question_type": "aggregation",
        "static_or_dynamic": "slow-changing",
        "split": 0,
        "query_time": "03/03/2024, 15:35:44 PT",
        "query": "how many meridian music awards has singer lila voss won?",
        "answer": "6",
        "alt_ans": ["six"],
        "pages": [
            {
                "site": "openpedia",
                "title": "Lila Voss",
                "entity": "Lila Voss",
                "filler": 3,
                "body": [
                    "Lila Voss (born 1990) is an American pop singer and songwriter. She has won six Meridian Music Awards from eleven nominations, including album of the year for Paper Moons in 2019.",
                ],
            },
            {
                "site": "soundcheck",
                "title": "Meridian Music Awards 2023: full winners list",
                "filler": 2,
                "body": [
                    "Lila Voss took home best pop vocal performance, her second award of the night, while newcomer Ada Pryce won best new artist. Velvet Static won best live act.",
                ],
            },
            {
                "site": "soundcheck",
                "title": "Lila Voss announces world tour",
                "entity": "Lila Voss",
                "filler": 3,
                "body": [
                    "Lila Voss will begin a 40-date world tour in September, her first since 2019. The tour opens in Toronto and ends in Sydney.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Meridian Music Awards",
                "filler": 3,
                "body": [
                    "The Meridian Music Awards are annual music awards presented since 1994. Winners are chosen by a panel of critics, broadcasters and musicians.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Who has won the most Meridian awards?",
                "filler": 1,
                "comments": 2,
                "body": [
                    "The record belongs to the soul singer Marcus Bell with fourteen. Among current pop singers Lila Voss is catching up fast.",
                ],
            },
        ],
    },
    {
        "slug": "velvet-static-reunion-tour",
        "domain": "music",
        "question_type": "false_premise",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "02/08/2024, 10:11:29 PT",
        "query": "what was the name of velvet static's 2020 reunion tour?",
        "answer": "invalid question",
        "alt_ans": [],
        "pages": [
            {
                "site": "openpedia",
                "title": "Velvet Static discography and tours",
                "entity": "Velvet Static",
                "filler": 3,
                "body": [
                    "Tours: Neon Roads Tour (2013), Parallel Lines Tour (2016), Afterglow Tour (2019). The band has never broken up; a planned 2020 tour was cancelled because of the pandemic.",
                ],
            },
            {
                "site": "soundcheck",
                "title": "Velvet Static cancel 2020 dates",
                "entity": "Velvet Static",
                "filler": 2,
                "body": [
                    "Velvet Static have cancelled all of their 2020 concerts. Refunds will be issued automatically. The band said it would use the time to finish its fourth album.",
                ],
            },
            {
                "site": "soundcheck",
                "title": "The Glass Pilots reunite for 2020 tour",
                "entity": "The Glass Pilots",
                "filler": 2,
                "body": [
                    "The Glass Pilots, who split up in 2011, announced a reunion tour called Homecoming for the summer of 2020, which was later moved to 2022.",
                ],
            },
            {
                "site": "vinylnotes",
                "title": "Velvet Static Afterglow Tour memories",
                "entity": "Velvet Static",
                "filler": 1,
                "comments": 3,
                "body": [
                    "Saw them on the Afterglow Tour in Dallas. Best light show I have ever seen. Share your photos and setlists here.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Austin music venues guide",
                "filler": 3,
                "body": [
                    "Austin's live music scene ranges from tiny bars to outdoor amphitheaters. Local favorites such as Velvet Static still play surprise shows at small venues.",
                ],
            },
        ],
    },
    # ================================ movie ================================
    {
        "slug": "lighthouse-keepers-daughter-director",
        "domain": "movie",
        "question_type": "simple",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "03/07/2024, 20:50:31 PT",
        "query": "who directed the 2018 film the lighthouse keeper's daughter?",
        "answer": "Ines Carvalho",
        "alt_ans": ["carvalho"],
        "pages": [
            {
                "site": "cinebase",
                "title": "The Lighthouse Keeper's Daughter (2018)",
                "entity": "The Lighthouse Keeper's Daughter",
                "filler": 2,
                "body": [
                    "The Lighthouse Keeper's Daughter is a 2018 drama film directed by Ines Carvalho and written by Carvalho and Tomas Lind. It stars Ana Reis as a young woman who returns to the island where she grew up.",
                ],
            },
            {
                "site": "reelreport",
                "title": "Review: The Lighthouse Keeper's Daughter",
                "entity": "The Lighthouse Keeper's Daughter",
                "filler": 4,
                "body": [
                    "Carvalho's film takes its time, and the patience pays off. Ana Reis gives a performance of remarkable restraint as a woman trying to decide whether to sell her father's house.",
                ],
            },
            {
                "site": "cinebase",
                "title": "The Lighthouse (2016)",
                "entity": "The Lighthouse",
                "filler": 2,
                "body": [
                    "The Lighthouse is a 2016 thriller directed by Owen Price about two keepers stranded by a winter storm. It is unrelated to the 2018 drama with a similar title.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Ines Carvalho",
                "filler": 2,
                "body": [
                    "Ines Carvalho (born 1979) is a Portuguese film director and screenwriter. Her films include Still Water (2012), The Lighthouse Keeper's Daughter (2018) and The Salt Road (2023).",
                ],
            },
            {
                "site": "reelreport",
                "title": "Best films of 2018: our critics' picks",
                "filler": 3,
                "body": [
                    "From a quiet island drama to a noisy space opera, 2018 had something for everyone. Our critics agreed on very little except the number one pick, Copper Sky's long-awaited rival, The Long Thaw.",
                ],
            },
        ],
    },
    {
        "slug": "copper-sky-opening-weekend",
        "domain": "movie",
        "question_type": "simple_w_condition",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "02/17/2024, 12:27:58 PT",
        "query": "how much did copper sky earn in its opening weekend in north america?",
        "answer": "$23.4 million",
        "alt_ans": ["23.4 million"],
        "pages": [
            {
                "site": "reelreport",
                "title": "Box office: Copper Sky opens strong",
                "entity": "Copper Sky",
                "empty": True,
                "filler": 0,
                "body": [],
                "snippet": "Copper Sky opened to $23.4 million in North America over its first weekend, beating expectations and finishing first at the box office ahead of two holdover titles.",
            },
            {
                "site": "cinebase",
                "title": "Copper Sky (2014)",
                "entity": "Copper Sky",
                "filler": 3,
                "body": [
                    "Copper Sky is a 2014 western directed by Arlo Fenwick. It grossed $148 million worldwide, of which $81 million came from international markets.",
                ],
            },
            {
                "site": "reelreport",
                "title": "Copper Sky II tops the weekend box office",
                "entity": "Copper Sky II",
                "filler": 2,
                "body": [
                    "Copper Sky II opened to $31.0 million in North America, the best opening ever for a western sequel and well ahead of the original film's debut.",
                ],
            },
            {
                "site": "reelreport",
                "title": "Review: Copper Sky is a western with a conscience",
                "entity": "Copper Sky",
                "filler": 4,
                "long": True,
                "body": [
                    "Arlo Fenwick's film looks like a classic western but plays like a family drama. The gunfights are brief, the conversations long, and both are handled well.",
                ],
            },
            {
                "site": "cinebase",
                "title": "Copper Sky: full cast and crew",
                "entity": "Copper Sky",
                "filler": 1,
                "body": [
                    "Directed by Arlo Fenwick. Starring Wade Harlan, Nora Quill, Elias Brandt. Music by Hanne Sorensen. Cinematography by Paulo Meireles.",
                ],
            },
        ],
    },
    {
        "slug": "arlo-fenwick-2010s-films",
        "domain": "movie",
        "question_type": "set",
        "static_or_dynamic": "static",
        "split": 1,
        "query_time": "02/29/2024, 18:05:16 PT",
        "query": "which films did arlo fenwick direct in the 2010s?",
        "answer": "Quiet Rivers, The Long Thaw, and Signal Hill",
        "alt_ans": [],
        "pages": [
            {
                "site": "openpedia",
                "title": "Arlo Fenwick",
                "filler": 3,
                "body": [
                    "Arlo Fenwick (born 1972) is an American film director. After Copper Sky in 2014 and its sequel, he directed Quiet Rivers, The Long Thaw, and Signal Hill, all released between 2015 and 2019.",
                    "Filmography: Dust Devil (2008), Copper Sky (2014), Quiet Rivers (2015), The Long Thaw (2017), Signal Hill (2019), Copper Sky II (2019, producer only), Northern Line (2022).",
                ],
            },
            {
                "site": "reelreport",
                "title": "Arlo Fenwick's films, ranked",
                "filler": 3,
                "body": [
                    "Fenwick has never made a bad film, but The Long Thaw remains his masterpiece. Signal Hill is underrated, and Quiet Rivers is the one that made critics pay attention.",
                ],
            },
            {
                "site": "cinebase",
                "title": "Signal Hill (2019)",
                "entity": "Signal Hill",
                "filler": 2,
                "body": [
                    "Signal Hill is a 2019 mystery film directed by Arlo Fenwick, set in a coastal radio station during the Second World War.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Ada Fenwick",
                "filler": 2,
                "body": [
                    "Ada Fenwick is a British documentary filmmaker. Her films of the 2010s include River People (2013) and The Last Ferry (2018). She is not related to Arlo Fenwick.",
                ],
            },
            {
                "site": "reelreport",
                "title": "Fenwick returns with Northern Line",
                "entity": "Northern Line",
                "filler": 2,
                "body": [
                    "Arlo Fenwick's first film of the new decade is a train-bound thriller. It premiered at a festival in the fall to mixed reviews.",
                ],
            },
        ],
    },
    {
        "slug": "quiet-rivers-nominations",
        "domain": "movie",
        "question_type": "aggregation",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "02/02/2024, 16:42:09 PT",
        "query": "how many academy award nominations did quiet rivers receive?",
        "answer": "4",
        "alt_ans": ["four"],
        "pages": [
            {
                "site": "cinebase",
                "title": "Quiet Rivers (2015): awards",
                "entity": "Quiet Rivers",
                "filler": 1,
                "body": [
                    "Academy Awards: 4 nominations (best picture, best director, best adapted screenplay, best cinematography), 1 win (best cinematography). Critics' circle awards: 3 wins.",
                ],
            },
            {
                "site": "reelreport",
                "title": "Oscar nominations: Quiet Rivers leads the dramas",
                "entity": "Quiet Rivers",
                "filler": 3,
                "body": [
                    "Quiet Rivers earned four nominations, including best picture and best director for Arlo Fenwick. The musical Starlight Avenue led all films with eleven.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Quiet Rivers",
                "entity": "Quiet Rivers",
                "filler": 3,
                "body": [
                    "Quiet Rivers is a 2015 American drama film directed by Arlo Fenwick, adapted from the novel by Helena Marsh. It follows two brothers who inherit a failing farm.",
                ],
            },
            {
                "site": "reelreport",
                "title": "Quiet Waters: festival diary",
                "entity": "Quiet Waters",
                "filler": 2,
                "body": [
                    "Quiet Waters, a Danish documentary about fishing villages, was the surprise of the festival. It is not to be confused with the Fenwick drama.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Did Quiet Rivers win best picture?",
                "entity": "Quiet Rivers",
                "filler": 1,
                "comments": 2,
                "body": [
                    "No, it lost best picture that year. It did win for cinematography, which most people agree it deserved.",
                ],
            },
        ],
    },
    {
        "slug": "copper-sky-sequel-gap",
        "domain": "movie",
        "question_type": "post-processing",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "02/16/2024, 21:19:40 PT",
        "query": "how many years after copper sky was its sequel released?",
        "answer": "5",
        "alt_ans": ["five", "5 years"],
        "pages": [
            {
                "site": "reelreport",
                "title": "Copper Sky II: was it worth the wait?",
                "entity": "Copper Sky II",
                "filler": 3,
                "body": [
                    "Copper Sky II arrived in 2019, five years after the original Copper Sky, and it mostly justifies the wait. Wade Harlan and Nora Quill return, and the story picks up a decade after the first film.",
                ],
            },
            {
                "site": "cinebase",
                "title": "Copper Sky II (2019)",
                "entity": "Copper Sky II",
                "filler": 2,
                "body": [
                    "Copper Sky II is a 2019 western directed by Mara Lindgren and produced by Arlo Fenwick, the director of the 2014 original.",
                ],
            },
            {
                "site": "cinebase",
                "title": "Copper Sky (2014)",
                "entity": "Copper Sky",
                "filler": 2,
                "body": [
                    "Copper Sky is a 2014 western directed by Arlo Fenwick and starring Wade Harlan and Nora Quill.",
                ],
            },
            {
                "site": "reelreport",
                "title": "Copper Sky III in development",
                "entity": "Copper Sky",
                "filler": 3,
                "body": [
                    "A third Copper Sky film is in development, with Mara Lindgren returning to direct. No release date has been set.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Best western sequels?",
                "filler": 1,
                "comments": 3,
                "body": [
                    "Copper Sky II is better than the original in my opinion. The first one drags in the middle.",
                ],
            },
        ],
    },
    {
        "slug": "julian-marsh-oscar",
        "domain": "movie",
        "question_type": "false_premise",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "03/10/2024, 14:33:02 PT",
        "query": "which film won julian marsh the oscar for best actor in 2019?",
        "answer": "invalid question",
        "alt_ans": [],
        "pages": [
            {
                "site": "openpedia",
                "title": "Julian Marsh",
                "filler": 3,
                "body": [
                    "Julian Marsh (born 1975) is a British actor. He has been nominated for an Academy Award twice, for Harbor Lights (2011) and The Long Thaw (2017), but has not won.",
                ],
            },
            {
                "site": "reelreport",
                "title": "Oscars 2019: the full winners list",
                "filler": 2,
                "body": [
                    "Best actor went to Samuel Adeyemi for The Crossing. Best actress went to Clara Holm for Winter Light. Julian Marsh was not among the nominees.",
                ],
            },
            {
                "site": "reelreport",
                "title": "Julian Marsh on playing the villain",
                "filler": 3,
                "body": [
                    "Julian Marsh says the role in Northern Line was the most fun he has had on a film set, and that he has stopped thinking about awards.",
                ],
            },
            {
                "site": "cinebase",
                "title": "Julian Marshall",
                "filler": 2,
                "body": [
                    "Julian Marshall is an American actor known for television work. He is often confused with British actor Julian Marsh.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Has Julian Marsh ever won an Oscar?",
                "filler": 1,
                "comments": 2,
                "body": [
                    "No. Two nominations, no wins. He did win a national film award for The Long Thaw, which may be what you are thinking of.",
                ],
            },
        ],
    },
    # ================================ open ================================
    {
        "slug": "water-boiling-point-fahrenheit",
        "domain": "open",
        "question_type": "simple",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "02/13/2024, 08:01:55 PT",
        "query": "at what temperature does water boil at sea level in fahrenheit?",
        "answer": "212 degrees fahrenheit",
        "alt_ans": ["212 °f", "212 f"],
        "pages": [
            {
                "site": "sciencedesk",
                "title": "What is the boiling point of water?",
                "entity": "the boiling point",
                "filler": 3,
                "body": [
                    "At sea level, where the air pressure is one standard atmosphere, pure water boils at 100 degrees Celsius, which is 212 degrees Fahrenheit. At higher altitudes the air pressure is lower, so water boils at a lower temperature.",
                ],
            },
            {
                "site": "sciencedesk",
                "title": "Why does water boil faster in the mountains?",
                "entity": "altitude",
                "filler": 3,
                "body": [
                    "In Denver, about a mile above sea level, water boils at roughly 202 degrees Fahrenheit. That is why pasta takes longer to cook there and why some recipes include high-altitude instructions.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Does salt make water boil faster?",
                "filler": 1,
                "comments": 3,
                "body": [
                    "No, it actually raises the boiling point very slightly. The amount of salt you add to pasta water changes it by less than a degree.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Fahrenheit scale",
                "entity": "the Fahrenheit scale",
                "filler": 2,
                "body": [
                    "The Fahrenheit scale is a temperature scale proposed in 1724 by the physicist Daniel Gabriel Fahrenheit. On this scale water freezes at 32 degrees at standard pressure.",
                ],
            },
            {
                "site": "sciencedesk",
                "title": "Freezing, melting and boiling explained",
                "filler": 2,
                "body": [
                    "Every substance changes from solid to liquid and from liquid to gas at particular temperatures that depend on pressure. Water is unusual because its solid form is less dense than its liquid form.",
                ],
            },
        ],
    },
    {
        "slug": "nile-vs-amazon",
        "domain": "open",
        "question_type": "comparison",
        "static_or_dynamic": "static",
        "split": 0,
        "query_time": "02/22/2024, 19:37:12 PT",
        "query": "which river is longer, the nile or the amazon?",
        "answer": "the Nile",
        "alt_ans": ["nile"],
        "pages": [
            {
                "site": "sciencedesk",
                "title": "The Nile and the Amazon: which is longer?",
                "entity": "the Nile",
                "filler": 3,
                "long": True,
                "body": [
                    "Most reference works list the Nile as the longest river in the world, at about 6,650 kilometers, slightly longer than the Amazon at about 6,400 kilometers. Some researchers argue that the Amazon is longer if its most distant source is counted, and the question is still debated.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Amazon River",
                "entity": "the Amazon",
                "filler": 3,
                "body": [
                    "The Amazon River in South America is the largest river in the world by discharge of water. It flows through Peru, Colombia and Brazil before reaching the Atlantic Ocean.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Cruising the river: a travel guide",
                "filler": 3,
                "body": [
                    "River cruises are a relaxed way to see a country. Boats on the big rivers of Africa and South America range from simple ferries to luxury ships with pools on deck.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Longest rivers in the world - list",
                "filler": 1,
                "comments": 2,
                "body": [
                    "1. Nile. 2. Amazon. 3. Yangtze. 4. Mississippi-Missouri. 5. Yenisei. The order of the first two depends on who you ask, but most lists put the Nile first.",
                ],
            },
            {
                "site": "sciencedesk",
                "title": "How do you measure a river?",
                "filler": 3,
                "body": [
                    "Measuring a river sounds simple, but choosing where it starts and where it ends is not. Deltas, seasonal channels and disputed sources can change the length by hundreds of kilometers.",
                ],
            },
        ],
    },
    {
        "slug": "planets-without-moons",
        "domain": "open",
        "question_type": "set",
        "static_or_dynamic": "static",
        "split": 1,
        "query_time": "03/12/2024, 10:48:26 PT",
        "query": "which planets in our solar system have no moons?",
        "answer": "Mercury and Venus",
        "alt_ans": ["venus and mercury"],
        "pages": [
            {
                "site": "sciencedesk",
                "title": "Moons of the solar system",
                "entity": "the solar system",
                "filler": 3,
                "body": [
                    "Of the eight planets, only Mercury and Venus have no moons. Earth has one, Mars has two small ones, and the giant planets have dozens each, with new ones still being discovered.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Venus",
                "entity": "Venus",
                "filler": 3,
                "body": [
                    "Venus is the second planet from the Sun. It has a thick atmosphere of carbon dioxide and the hottest surface of any planet. Venus has no natural satellites.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Why doesn't Mercury have a moon?",
                "filler": 1,
                "comments": 2,
                "body": [
                    "It is so close to the Sun that any moon would likely be pulled away or would crash into the planet. At least that is the usual explanation.",
                ],
            },
            {
                "site": "sciencedesk",
                "title": "Saturn now has the most known moons",
                "filler": 2,
                "body": [
                    "Astronomers have confirmed dozens of new small moons around Saturn, putting it ahead of Jupiter for the most known moons of any planet.",
                ],
            },
            {
                "site": "sciencedesk",
                "title": "Dwarf planets and their moons",
                "filler": 2,
                "body": [
                    "Dwarf planets can have moons too. Pluto has five, the largest of which, Charon, is about half the size of Pluto itself.",
                ],
            },
        ],
    },
    {
        "slug": "harlow-institute-city-population",
        "domain": "open",
        "question_type": "multi-hop",
        "static_or_dynamic": "slow-changing",
        "split": 0,
        "query_time": "02/06/2024, 13:14:49 PT",
        "query": "what is the population of the city where the harlow institute of technology is located?",
        "answer": "318,900",
        "alt_ans": ["318900"],
        "pages": [
            {
                "site": "openpedia",
                "title": "Harlow Institute of Technology",
                "filler": 3,
                "body": [
                    "The Harlow Institute of Technology is a private research university in Brennick. Founded in 1889, it has about 11,000 students and is known for engineering and computer science.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Brennick city profile",
                "filler": 3,
                "body": [
                    "Brennick is the third-largest city in the region, with a population of 318,900 at the last census. It is home to the Harlow Institute of Technology, two hospitals and a busy river port.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Harlow: market town guide",
                "filler": 3,
                "body": [
                    "Harlow is a market town of about 24,000 people, 60 kilometers north of Brennick. Despite the name, it has no connection with the institute of technology.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Moving to Brennick for grad school - advice?",
                "filler": 1,
                "comments": 3,
                "body": [
                    "Rents near the institute are high, so most students live across the river. The city is big enough to have everything but small enough to bike anywhere.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Harlow College of Art",
                "filler": 2,
                "body": [
                    "Harlow College of Art is a small art school in the town of Harlow with about 900 students. It is unrelated to the Harlow Institute of Technology.",
                ],
            },
        ],
    },
    {
        "slug": "linden-park-library-saturday",
        "domain": "open",
        "question_type": "simple_w_condition",
        "static_or_dynamic": "slow-changing",
        "split": 0,
        "query_time": "03/02/2024, 09:05:13 PT",
        "query": "what time does the linden park public library close on saturdays?",
        "answer": "5 pm",
        "alt_ans": ["5:00 pm"],
        "pages": [
            {
                "site": "cityguide",
                "title": "Linden Park Public Library: hours and location",
                "filler": 2,
                "body": [
                    "Linden Park Public Library, 200 Elm Street. Hours: Monday to Thursday 9 am to 8 pm; Friday 9 am to 6 pm; Saturday 10 am to 5 pm; closed on Sundays and public holidays.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Linden Park branch to close for renovation",
                "filler": 2,
                "body": [
                    "The Linden Park branch library will close for six weeks this summer while the children's room is renovated. Books can be returned at the Oak Hill branch.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Oak Hill Public Library: hours",
                "filler": 2,
                "body": [
                    "Oak Hill Public Library is open Monday to Saturday from 9 am to 9 pm and on Sundays from noon to 4 pm.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Good places to study in Linden Park?",
                "filler": 1,
                "comments": 3,
                "body": [
                    "The public library is quiet and has good wifi, but it gets busy on Saturday mornings. The cafe on the corner of Elm and Fifth is fine too if you buy something.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Linden Park neighborhood guide",
                "filler": 3,
                "body": [
                    "Linden Park is a leafy residential neighborhood known for its Saturday farmers market, its public library and the big park the neighborhood is named after.",
                ],
            },
        ],
    },
    {
        "slug": "tokyo-london-time-difference",
        "domain": "open",
        "question_type": "post-processing",
        "static_or_dynamic": "static",
        "split": 1,
        "query_time": "01/25/2024, 06:30:58 PT",
        "query": "how many hours ahead of london is tokyo in winter?",
        "answer": "9 hours",
        "alt_ans": ["nine hours"],
        "pages": [
            {
                "site": "sciencedesk",
                "title": "Time zones explained",
                "entity": "time zones",
                "filler": 3,
                "body": [
                    "Tokyo uses Japan Standard Time, nine hours ahead of Coordinated Universal Time, all year round. London uses Greenwich Mean Time in winter, which is the same as Coordinated Universal Time, so in winter Tokyo is 9 hours ahead of London.",
                    "In summer London moves its clocks forward by one hour, and the difference shrinks to 8 hours. Japan does not observe daylight saving time.",
                ],
            },
            {
                "site": "answerhub",
                "title": "Best time to call Japan from the UK?",
                "filler": 1,
                "comments": 3,
                "body": [
                    "Early morning UK time works best. If you call at 8 am in London it is late afternoon in Tokyo. Avoid calling after lunch UK time because it will be the middle of the night there.",
                ],
            },
            {
                "site": "cityguide",
                "title": "Flying from London to Tokyo: what to expect",
                "filler": 3,
                "body": [
                    "Direct flights from London to Tokyo take about fourteen hours. Most travelers feel jet lag for several days, especially when flying east.",
                ],
            },
            {
                "site": "openpedia",
                "title": "Greenwich Mean Time",
                "filler": 2,
                "body": [
                    "Greenwich Mean Time is the mean solar time at the Royal Observatory in Greenwich, London. It is used as civil time in the United Kingdom in winter.",
                ],
            },
            {
                "site": "sciencedesk",
                "title": "Why do we have daylight saving time?",
                "entity": "daylight saving time",
                "filler": 3,
                "body": [
                    "Daylight saving time moves an hour of daylight from the morning to the evening in summer. Many countries use it, but many others, including Japan, China and India, do not.",
                ],
            },
        ],
    },
]
