"""An honest "I don't know": questions asking for a fact no retrieved section holds get no evidence, while a
knowledge base that does hold it still answers."""

from __future__ import annotations

import time

import pytest

from rag.answer.answerability import unanswerable_reason
from rag.answer.evidence import evidence
from rag.documents import Chunk, SearchHit, SubChunk


def hit(text: str, title: str = "7 CFR 273", headings: tuple[str, ...] = ("§ 273.2 Applications.",),
        n: int = 0) -> SearchHit:
    sub = SubChunk(f"c{n}::0.0", f"c{n}::0", 0, "paragraph", text, list(headings))
    return SearchHit(Chunk(f"c{n}::0", f"d{n}", 0, title, list(headings), [sub], text=text), 1.0)


SNAP_RULES = [hit("A SNAP household must apply at the SNAP office. SNAP benefits are issued on an EBT card. "
                  "The SNAP office must process the application within 30 days.", n=i) for i in range(3)]


@pytest.mark.parametrize(("question", "why"), [
    ("whats the phone number for the snap office in cuyahoga county", "contact details"),
    ("what time does the DSS office open on saturdays", "opening hours"),
    ("wheres the closest food pantry near 43215", "a place nearby"),
    ("can u look up case #4471902 and tell me if its approved", "a case lookup"),
    ("can you check where my client is on the waitlist", "a case lookup"),
    ("how much is the max snap amount for a family of 4 this year", "figure"),
    ("whats the gross income limit in dollars for FY2025", "2025 figure"),
    ("pregnant client asking how to sign up for WIC too", "asks about WIC"),
    ("does this client qualify for medicaid? shes 30", "asks about Medicaid"),
    ("clients EBT card got stolen and someone drained it - how does she get a new card?", "EBT card logistics"),
    ("what day of the month does snap get loaded on the ebt card in florida", "EBT card logistics"),
    ("she forgot her EBT PIN, what does she do", "EBT card logistics"),
    ("how can she check her snap balance", "EBT card logistics"),
    ("is there a hotline she can call about her food stamps", "contact details"),
    ("whats the gross income limit for a household of 3 in 2025", "2025 figure"),
    ("max snap for a family of 5 rn??", "figure"),
    ("whats the net income limit for a household of 2 for this fiscal yr", "figure"),
    ("she filed 2 wks ago, how long does it take to approve UI?", "asks about unemployment"),
    ("whats the most a family of 5 could possibly get in food stamps right now?", "figure"),
    ("did his recert get approved yet? he turned it in last week", "a case lookup"),
    ("is his fair hearing still on for the 3rd", "a case lookup"),
    ("how can she check how much is left on her ebt", "EBT card logistics"),
    ("when will her snap deposit hit her card this month", "EBT card logistics"),
    ("her card was skimmed and all her benefits are gone, can she get them back", "EBT card logistics"),
    ("can she use her ebt card at a farmers market", "EBT card logistics"),
    ("can she get on section 8 housing?", "asks about housing"),
    ("what documents does she need for a housing voucher", "asks about housing"),
    ("does the food bank deliver to seniors", "asks about food banks"),
    # contact details beyond a phone number, and an office's own schedule
    ("need the number for the food stamp office in lake county", "contact details"),
    ("what's the email address for the caseworkers at our dss", "contact details"),
    ("where does she mail her renewal packet in cook county", "contact details"),
    ("is the hhs office open on veterans day", "opening hours"),
    ("when does the county office open on mondays", "opening hours"),
    ("heard the snap office downtown is closing next month, true?", "opening hours"),
    # a state's own figures
    ("what is the SUA for new jersey", "New Jersey's own figure"),
    ("how much can a family of 3 make in texas and still get snap", "Texas's own figure"),
    # what the card can buy, and the card at the till
    ("can she buy dog food with her snap", "what the benefits can buy"),
    ("can ebt be used for paper towels", "what the benefits can buy"),
    ("are energy drinks snap eligible items", "what the benefits can buy"),
    ("how can she check whats left on her ebt card if she lost the receipt", "EBT card logistics"),
    ("can she use her ebt card to order groceries on amazon", "EBT card logistics"),
    ("can you book her recert interview for thursday at 2pm", "a case lookup"),
    ("what's the cap on the excess shelter deduction for oct 2024-sept 2025", "2024 figure"),
    ("client gets SSI, how much is SSI going up in january with the COLA", "figure"),
    ("how much is colorado's standard medical deduction amount for elderly clients", "Colorado's own figure"),
    ("does pennsylvania do broad based categorical eligibility, and what % of poverty is their gross cutoff",
     "Pennsylvania's own figure"),
    ("client's on snap, how does she get one of those free lifeline phones", "asks about Lifeline"),
    ("what is the excess shelter cap at this point, the current number not the old one", "figure"),
    ("how many hrs a week does colorado make them do for E&T", "Colorado's own figure"),
    ("need the language line # to conference in an interpreter", "contact details"),
    ("did the county get the paystubs she faxed on tuesday?", "a case lookup"),
    ("how do i get her 2 kids signed up for CHIP, she makes too much for medicaid", "asks about Medicaid"),
    ("kids get snap - whats the income limit for the summer EBT / sun bucks thing", "asks about Summer EBT"),
    ("will the EBT card work for a hot rotisserie chicken from the deli", "what the benefits can buy"),
    ("can she use her ebt for the hot rotisserie chicken at kroger? she's not homeless", "what the benefits can buy"),
    ("can he buy the hot rotisserie chicken at the grocery store deli with his ebt card?", "what the benefits can buy"),
    ("is she allowed to use snap for hot deli food", "what the benefits can buy"),
    ("she entered the wrong pin too many times and now her card is locked", "EBT card logistics"),
    ("is there parking at the dss on main st or should she take the bus", "a place nearby"),
    ("will getting snap for her kids hurt her green card application under public charge?",
     "immigration consequences"),
    ("how do i reset a client's password on the state benefits portal", "an online account's logistics"),
    ("does the housing authority count her snap as income when they figure her section 8 rent?",
     "how another program counts SNAP"),
    ("does snap count as income for ssi", "how another program counts SNAP"),
    ("her snap card keeps getting declined at the store", "EBT card logistics"),
    ("whats his remaining ebt balance", "EBT card logistics"),
    ("can she shop online for groceries with her ebt", "EBT card logistics"),
    ("someone used his card without asking and bought $200 of stuff", "EBT card logistics"),
    ("when do benefits go on the card each month", "EBT card logistics"),
    # one client's case, and a request to act for her
    ("did her recert go through yet", "a case lookup"),
    ("can you check if my clients application was approved", "a case lookup"),
    ("pls look at case 5512093", "a case lookup"),
    ("could you schedule her for an interview next week", "a case lookup"),
    # a website's account, and other programs by other names
    ("she got locked out of her account on the benefits portal", "online account"),
    ("shes locked out of the snap app, what does she do", "online account"),
    ("how do her kids get free lunch at school", "asks about school meals"),
    ("how do i sign the twins up for summer ebt", "asks about Summer EBT"),
    ("how does he file for unemployment", "asks about unemployment"),
    ("how does he file his weekly unemployment claim in NJ", "asks about unemployment"),
    ("how does she apply for heating assistance in ohio", "asks about LIHEAP"),
    ("whats the income cutoff for free school lunch for a family of 4", "asks about school meals"),
    ("is there a lifetime limit on tanf cash in georgia?", "asks about TANF"),
    ("client wants TANF cash in arizona, whats the application process", "asks about TANF"),
    ("who should i call at the county about her missing notice", "contact details"),
    ("does the dss take walk-ins", "opening hours"),
    ("whats the current standard deduction", "figure"),
    ("what is the 2027 net income limit", "2027 figure"),
    ("her ebt card is frozen, what now", "EBT card logistics"),
    ("can he get cash back off his snap card", "EBT card logistics"),
    ("when will the benefits show up on her card", "EBT card logistics"),
    ("is a birthday cake covered by snap", "what the benefits can buy"),
    ("can she buy soda on ebt", "what the benefits can buy"),
    ("could you pull up his case and tell me the status", "a case lookup"),
    ("pls find out why her benefits got cut", "a case lookup"),
    ("is her recert interview still on for friday", "a case lookup"),
    ("she needs help paying rent, how does she apply", "asks about housing"),
    ("can she sign up for medicare at the snap office", "asks about Medicare"),  # the office is where, not what
    ("whats the customer service number for ebt", "contact details"),
    ("who is the supervisor at the eastside office", "contact details"),
    ("is there a snap office in springfield she can get to by bus", "a place nearby"),
    ("what's the max allotment for 2 people currently", "figure"),
    ("gross income limit for 4, 2026 numbers", "2026 figure"),
    ("can she swipe her ebt twice in one day", "EBT card logistics"),
    ("is the ebt system down", "EBT card logistics"),
    ("her snap didnt load this month", "EBT card logistics"),
    ("what day does snap come if her case number ends in 3", "EBT card logistics"),
    ("he cant log into the snap app", "online account"),
    ("can you see if she's been sent her renewal", "a case lookup"),
    ("which worker is assigned to her case", "a case lookup"),
    ("please submit a change report for her", "a case lookup"),
    ("how many families in our county get snap", "statistics"),
    ("can the snap office help her get a free phone", "asks about Lifeline"),
    ("how does a veteran apply for va disability", "asks about VA"),
    ("can she get help paying for child care, how does she apply", "asks about child care"),
    ("is there a list of snap offices in lake county", "a place nearby"),
    ("does the county office close early on new years eve", "opening hours"),
    ("is the snap office on 5th street still open or did it move", "opening hours"),
    ("what are the 2026 snap income guidelines for 3", "2026 figure"),
    ("her ebt card chip wont read at the store", "EBT card logistics"),
    ("can he use his ebt card in another state while visiting family", "EBT card logistics"),
    ("was her snap reloaded yet this month", "EBT card logistics"),
    ("did the county get her paystubs yet", "a case lookup"),
    # session 13, from cfr273_probe10's misses (in other words here)
    ("can you check if john smith's app got approved yet", "a case lookup"),
    ("why did he get cut off last month", "a case lookup"),
    ("when is her recert due? she's in lake county", "a case lookup"),
    ("how many of the 3 months has he already used", "a case lookup"),
    ("what did the judge decide at her hearing", "a case lookup"),
    ("is there a claim on his case from 2023", "a case lookup"),
    ("whats the name of her caseworker", "a case lookup"),
    ("can u pull up her budget", "a case lookup"),
    ("did his interview get rescheduled", "a case lookup"),
    ("what email can he send his paystubs to", "contact details"),
    ("which office should she go to, she lives in 44102", "a place nearby"),
    ("what day do benefits load? case # ends in 4", "EBT card logistics"),
    ("will her ebt card work in georgia while she visits", "EBT card logistics"),
    ("if he doesnt spend his snap do they take it off the card", "EBT card logistics"),
    ("the freezer broke and all her food spoiled, can her snap be replaced", "replacing food lost"),
    ("standard deduction for 4 people this yr?", "figure"),
    ("is the reporting threshold still $100 or is it not $100 anymore", "figure"),
    ("current SUA for a renter, did it go up", "figure"),
    ("income limit for 3 in ohio, i need the actual number", "figure"),
    ("if a family gets snap do the kids automatically qualify for free school lunch", "school meals"),
    # session 13, from cfr273_probe12/13's misses (in other words here)
    ("who's the manager at the east side office", "contact details"),
    ("who do i ask for at the downtown snap center", "contact details"),
    ("how does she book an appointment w the lake county office", "contact details"),
    ("what time does the office stop taking applications today", "opening hours"),
    ("how long are the wait times at the county office", "opening hours"),
    ("will his ebt card work at the stores up there", "EBT card logistics"),
    ("did mr lee's application go thru", "a case lookup"),
    ("when is john doe's renewal due", "a case lookup"),
    ("why did the smith case close", "a case lookup"),
    ("is there any ipv disqualification on file for him", "a case lookup"),
    ("check this client, dob 5/6/77, is she active", "a case lookup"),
    ("need her benefit history for last year", "a case lookup"),
    ("what did the letter say, she threw it out", "a case lookup"),
    ("she mailed her report last week. did they get it?", "a case lookup"),
    ("pls confirm the county received her paystubs", "a case lookup"),
    ("how much snap will she get, hh of 3 with 1500 income", "figure"),
    ("how much snap is ms garcia getting this month", "figure"),
    ("is the minimum benefit still $23", "figure"),
    ("give me the SUA for ohio", "Ohio's own figure"),
    ("how many hours does tanf make her work", "asks about TANF"),
    ("how much eitc can she get", "asks about tax credits"),
    ("can she get a free phone bc she's on snap? how does she sign up", "asks about Lifeline"),
    ("does her ebt card work at farmers markets", "EBT card logistics"),  # where it is taken (7 CFR 278)
    # session 13, from cfr273_probe14's misses (in other words here)
    ("she lost the notice, can you tell me what it said", "a case lookup"),
    ("can you tell me why her snap dropped this month", "a case lookup"),
    ("do you know when her hearing is scheduled", "a case lookup"),
    ("did the county decide on his exemption yet", "a case lookup"),
    ("status of the application for my client", "a case lookup"),
    ("status of app, dob [dob]", "a case lookup"),  # as the redaction leaves it
    ("who to call in the county about her abawd months", "contact details"),
    ("who's the director of snap intake at the county office", "contact details"),
    ("what day of the month do benefits get loaded in new york", "EBT card logistics"),
    ("she hasnt used her snap in 6 months does it go away", "EBT card logistics"),
    ("when does liheap open, how to apply", "asks about LIHEAP"),
    ("how does she get the double up food bucks at the market", "asks about nutrition incentives"),
    # session 13, from cfr273_probe16's misses (in other words here)
    ("what is the gross income limit in dollars for a family of 4", "figure"),
    ("whats the poverty line for 3 people this year", "figure"),
    ("how much ssi does an adult get in 2025", "figure"),
    ("what did her worker write in the case notes", "a case lookup"),
    ("she asked for a hearing, did it get scheduled", "a case lookup"),
    ("she lost the overpayment letter, how much does she owe", "a case lookup"),
    ("does the office give out ebt cards over the counter", "EBT card logistics"),
    ("her ebt card keeps saying invalid pin", "EBT card logistics"),
    ("mailing address for paper applications in dane county", "contact details"),
    ("is the county office open on veterans day", "opening hours"),
    ("does the north office do walk in interviews", "opening hours"),
    ("how does she get a birth certificate from the dmv", "asks about ID documents"),
    ("how does she claim the eitc", "asks about tax credits"),
    ("what is the average snap benefit in our county", "statistics"),
    # session 15: asked for while telling of the client's own errand, or as "do you have that number"
    ("she has to send her paystubs today, whats the fax number for the county office", "contact details"),
    ("client needs to drop off her forms, do you have their address", "contact details"),
    ("she wants to call the hearing office, do u have the number", "contact details"),
    # session 15: navigators' shorthand for kinds already checked (in other words than the read probes' misses)
    ("can he buy a birthday cake w/ his snap", "what the benefits can buy"),
    ("does the corner store take ebt", "EBT card logistics"),
    ("somebody skimmed her snap at the gas station, what now", "EBT card logistics"),
    ("all her benefits were cloned and spent in another state", "EBT card logistics"),
    ("the submit button on the benefits portal is grayed out", "an online account's logistics"),
    ("the state app keeps crashing when she uploads her lease", "an online account's logistics"),
    ("she tried to upload her id to the county benefits website but it fails", "an online account's logistics"),
    # session 15: another program's own payments, sanctions and decisions, and getting it without applying
    ("when does her ssi check come this month", "asks about SSI"),
    ("how long will the tanf sanction last if she keeps missing", "asks about TANF"),
    ("she wants to fight the medicaid denial, how", "asks about Medicaid"),
    ("does her son get medicaid automatically if she's on snap", "asks about Medicaid"),
    # session 15: one client's record, and another program's waiting list
    ("is his sister still listed as the payee on his case", "a case lookup"),
    ("how many of her 3 months shes already used up", "a case lookup"),
    ("is she high up on the section 8 waiting list yet", "asks about housing"),
    ("whats the standard utility allowance in our state", "own state's figure"),
    ("how much does my county pay for e&t bus passes", "own state's figure"),
    # session 15: a state's own choice among the federal options (in other words than the read probes' misses)
    ("does georgia let elderly households stay certified for 2 years", "what Georgia chose"),
    ("is arizona doing simplified reporting for everyone", "what Arizona chose"),
    ("does WA still waive the asset test", "what Washington chose"),
    ("which ohio counties have the time limit waived", "what Ohio chose"),
    ("what is kentucky's policy on e&t for abawds", "what Kentucky chose"),
    # session 16, from cfr273_probe21's misses (in other words here): another program's payment going out and
    # what it covers, a named county's own waiver, a local provider's identity
    ("when does the heating assistance payment get sent to the gas company", "asks about LIHEAP"),
    ("does her medicaid plan cover glasses for the kids", "asks about Medicaid"),
    ("is dekalb county one of the abawd waived areas right now", "Dekalb County's own waiver"),
    ("does wayne co have a time limit waiver", "Wayne County's own waiver"),
    ("which nonprofit in her area runs the job search program", "contact details"),
    ("who's the snap outreach partner for our county", "contact details"),
    ("how much does a family of five get in snap right now", "figure"),
    # session 16, from probe26's misses (in other words here): getting into another program without applying, the
    # navigator's own area's waiver
    ("since hes on snap is he automatically in the medicaid program", "asks about Medicaid"),
    ("is my county still waived from the abawd time limit", "own area's waiver"),
    # session 16, probe30's: another program's decision contested in the next sentence
    ("his ssi got denied. can he fight that", "asks about SSI"),
    # session 16, probe32's (in other words here)
    ("do you have the 1-800 number for the ebt office", "contact details"),
    ("can you look up whether her case got approved", "a case lookup"),
    ("since shes on snap will she automatically get medicaid for the baby", "asks about Medicaid"),
])
def test_questions_for_facts_the_sections_do_not_hold_have_no_evidence(question: str, why: str) -> None:
    reason = unanswerable_reason(question, SNAP_RULES)
    assert reason is not None and why in reason
    assert evidence(question, question, SNAP_RULES) == 0.0


@pytest.mark.parametrize("question", [
    "how long does the snap office have to process an application",
    "client got LIHEAP help on her heating bill, does that count as income for snap?",  # how it counts for SNAP
    "how do I check on my case?",  # a how-to, not a lookup asked of the bot
    "can you check if students can get SNAP?",
    "client applied on the 20th, does she get a full month of snap this month?",  # no figure asked
    "is the income limit 130 percent of poverty?",
    "what day will her expedited snap benefits be available",  # expedited service: the rules say when
    "can her neighbor use her ebt card to buy food for her",  # an authorized representative
    "can she get snap while waiting on her new green card",  # an immigration card, not the EBT card
    "lost my social security card, how do I get a new card",  # no EBT context
    "client called the snap hotline and they said she makes too much, can she appeal?",  # told of, not asked for
    "she got a $300 tax refund in 2024, does it count as a resource",  # a year, but no figure of that year asked
    "does food from a food bank count as income for snap",  # how it counts for SNAP
    "can her authorized rep use her ebt card to shop for her",
    "the snap office closed her case, can she appeal",  # the case, not the office, was closed
    "what happens if her application was denied",  # a rule about denials, not where her case stands
    "does a client in ohio have to do work requirements",  # a state named, no figure asked
    "can a student with a work study job get snap in california",
    "can she apply for snap online",
    "is there an interview, and can it be by phone",
    "she is currently on ssi, what is the resource limit",  # "currently" is her situation, not this year's figure
    "19 yr old, no kids, not working rn. is he under the 3 month limit?",  # "rn" is his situation, not the figure's
    "if her UI gets approved, does it count as income for snap?",  # UI told of, its income asked
    "if hes homeless can he use his ebt at places that serve meals to homeless people?",  # 273.11(h)
    "shes homeless, can she use her snap for hot meals at the shelter?",  # 273.11(h), not an item's eligibility
    "does the hot water bill count toward her shelter costs",  # a utility, not hot food
    "the notice came the day her benefits loaded, dont they have to give 10 days notice first?",  # adverse action
    "if her recert is approved, does she get a new cert period right away?",  # a rule, no status asked
    "can her hearing still be held if she moves?",  # a rule about hearings
    "how much of her current paycheck counts",
    "can she walk in and apply the same day",  # filing in person, not the office's hours
    "she said the number was toll free, can she still apply by phone",  # told of, not asked for
    "does va disability count as income for snap",  # how it counts for SNAP
    "how many people can be in one snap household",
    "her roommate will chip in on groceries, does that count as income for snap",
    "she moved to another state, does she have to reapply for snap there",
    "she uploaded her paystubs late, does the county have to wait",  # told of an upload, no trouble with a site
    "does her ebt balance count as a resource",  # a rule about the balance, not what it is
    "does a 401k count toward the limit in california",  # a state named, no figure asked for
    "client in texas is 19 and in college, can she get snap",  # where the client lives, not what the state chose
    "she moved from ohio, does she have to reapply here",
    "IS IN SCHOOL FULL TIME, DOES HE STILL QUALIFY",  # capitals: "IN" is a word, not Indiana
    "do we have the number of people in the household right",  # a count, not a phone number
    "who can be listed as her authorized representative",  # the rule, not her record
    "how many months can an abawd get snap without working",  # the rule, not his count
    # another program as the client's situation: SNAP's own rule is asked
    "client got sanctioned by tanf for not following their rules, can snap sanction her for the same thing",
    "she gets tanf, is she automatically eligible for snap",
    "her ssi check comes on the 1st, does it count as income for snap",
    "does the county accept snap applications by fax",  # an office taking applications, not a store the card
    "can they take snap away if she misses the interview",  # taking benefits away, not a store taking the card
    "can she buy groceries w/ snap at a farm stand",  # food itself: the rules' question of who shops where
    "she skimmed the notice and missed the interview date, can she reschedule",  # read quickly, not card fraud
    "does LA county need her pay stubs",  # LA as in Los Angeles: not read as Louisiana
    "does ohio have to give her a hearing before cutting her off",  # what the rules require of the state
    "can our state use a standard utility allowance instead of actual bills",  # no figure asked
    "what if she needs a number to meet my state's requirements",  # a Social Security number, not an amount
    # people "eligible for snap" (the rules' own question), not an item bought with it
    "is a green card holder eligible for snap?",
    "is she still eligible for food stamps if she quits her job",
    "she was approved for snap last week, when do the benefits start",
    # another program named as the client's situation, not as the program asked into
    "mom gets TANF, is the household categorically eligible?",
    "client is on SSI, does she qualify for the medical deduction?",
    "she receives medicaid, can she get expedited service",
    "the family is on section 8, can they get the shelter deduction",
    "does she qualify for the standard utility allowance if she gets energy assistance",
    "is there a limit on how much of her shelter costs they deduct",
    "does tanf count as income for snap",
    "does the county count her ssi as income",
    # what the agency must give or have is a rule, not a request for the fact
    "client got a snap denial letter with no phone number on it. arent they supposed to put a number to call?",
    "is the state supposed to give her a number to call for help with the form?",
    "does texas count a 401k as a resource",  # a state named, no figure asked for
    "how are cost of living increases to her ssi handled at recert",  # a COLA, no figure asked for
    "what's the snap income limit for a household of 3",  # SNAP's own limit, not another program's
    "how much does her tanf count as income",  # how it counts for SNAP
    "how much of her ssi counts for snap",
    "she gets snap, what is the income limit for her household size",
    "can she get snap while her green card application is pending",  # no consequence for the card asked
    # session 13: near-misses of the new checks
    "she dropped her application in the box after the office closed, what is her filing date",  # told of
    "when is her recert interview due if she was certified for 12 months",  # the rule, not her record
    "why would her snap be reduced if her rent went up",  # a rule, not her notice
    "is there a limit on how many months an abawd can get snap",
    "can she get back the snap she should have gotten when the worker made a mistake",  # lost benefits
    "can her authorized representative use her ebt card for her",  # who may use it, a rule
    "what is the standard deduction for a household of 4",  # no year asked
    "is the child of a snap household automatically eligible for snap",  # SNAP's own door
    # session 13, near-misses of the fifth round (the first three as doc2dial's SSA pages are asked)
    "How much will I receive for disability",  # a page may say how to estimate it
    "Is my spouse old enough to be eligible? How much can they receive?",
    "so how much do I lose if I start early? can you give me a real number?",
    "can the rehab center use her snap to buy her food",  # who may shop, not what may be bought
    "how do they figure out how much snap a family of 4 gets",  # the method, not one household's figure
    "can a caseworker deny an application if the client missed the interview",
    "is a boarder included as a household member",
    "what does a notice of adverse action have to say",
    "if she drops her application in the box after closing time, what is her filing date",  # told of
    "what does the regulation say the state must decide within 30 days",
    "If I default on the loan who should I call to work it out?",  # whom, which a page names without a number
    "can she give her neighbor her ebt card and pin to shop for her",  # an authorized representative
    "how much does she owe if the overissuance was the agency's error",  # how a claim is figured
    "client doesnt have a drivers license, what can she use for ID",  # what verifies identity
    "is an overpayment claim against her a reason to deny the application",
    # session 16: near-misses of its round
    "the store owner, who takes ebt, wants to be her authorized rep. is that allowed",  # told of, not asked
    "are bills medicaid won't pay for part of the medical deduction",  # SNAP's deduction
    "her county has a waiver, does the abawd time limit still apply to her",  # her own county, a rule asked
    "client moved to fulton county last month, does she have to reapply",  # a county named, no waiver asked
    "who is the authorized representative for a resident of a treatment center",  # a rule's who, not a provider
    "shes 52 and sleeping in her car right now, does the abawd time limit apply to her",  # her situation now
    "she got approved for expedited snap, how soon should it be on her card",  # expedited service's deadline
    "how many days until the emergency food stamps are on her ebt card",
    # session 18: an employer's lockout and a disqualification are not an account locked
    "the plant locked out all the workers last week, not a strike. is he treated like a striker",
    "how long is he locked out of snap if its his first time",
    # session 18: the deadline asked as "the latest" or "the deadline"
    "she qualifies for expedited. whats the latest the benefits can be on her card",
    "approved for emergency snap, whats the deadline for it to show up on her ebt card",
    "she is waiting on her unemployment claim, does she still have to register for work",  # her situation
    "his wife's tanf just got closed, does that end their snap too",  # a change the SNAP rules act on
    "is a household on ssi automatically eligible for snap",  # SNAP's own categorical eligibility
])
def test_questions_the_sections_may_answer_are_left_to_coverage(question: str) -> None:
    assert unanswerable_reason(question, SNAP_RULES) is None


def test_a_knowledge_base_that_holds_the_fact_still_answers() -> None:
    contacts = [hit("Call the Cuyahoga County office at (216) 987-7000, open 8:00 a.m. to 5:00 p.m. on weekdays.",
                    title="County offices", headings=("Contact",))]
    assert unanswerable_reason("whats the phone number for the snap office in cuyahoga county", contacts) is None
    assert unanswerable_reason("what time does the county office open on saturdays", contacts) is None
    figures = [hit("For fiscal year 2025 the maximum SNAP allotment for 4 people is $975.", title="FY 2025 COLA")]
    assert unanswerable_reason("max snap amount for 4 people for FY2025", figures) is None
    wic = [hit("WIC serves pregnant women. Apply for WIC at a WIC clinic.", title="WIC basics", headings=()),
           *SNAP_RULES[:2]]
    assert unanswerable_reason("how to sign up for WIC", wic) is None  # a best section is about WIC
    card = [hit("To replace a lost or stolen EBT card, call the EBT customer service line. SNAP benefits are "
                "deposited on the same day each month, set by the last digit of the case number.",
                title="Your EBT card", headings=("Lost cards",))]
    assert unanswerable_reason("client lost her EBT card, how does she get a new one", card) is None
    assert unanswerable_reason("what day does snap get loaded on the ebt card", card) is None
    foods = [hit("Eligible foods are foods for the household to eat; pet food, vitamins and paper goods cannot be "
                 "bought with SNAP.", title="What SNAP buys", headings=("Eligible foods",))]
    assert unanswerable_reason("can she buy dog food with her snap", foods) is None
    portal = [hit("Forgot your password? Select 'Reset password' on the sign-in page and follow the email link.",
                  title="Benefits portal help", headings=("Your account",))]
    assert unanswerable_reason("she got locked out of her account on the benefits portal", portal) is None
    state = [hit("New Jersey's standard utility allowance is $785 a month.", title="NJ SNAP figures")]
    assert unanswerable_reason("what is the SUA for new jersey", state) is None
    # the federal rules name several states together for their own figures: not "our state"'s
    federal = [hit("The income standards for Alaska and Hawaii are higher than those for the 48 contiguous States "
                   "and the District of Columbia.", n=i) for i in range(3)]
    assert unanswerable_reason("whats the gross income limit in our state", federal) is not None
    manual = [hit("In Ohio the standard utility allowance is $540 a month.", title="Ohio SNAP manual")]
    assert unanswerable_reason("whats the standard utility allowance in our state", manual) is None
    # a state manual that says what the state chose answers, named in full or by its postal code
    choice = [hit("NY SNAP households are on simplified reporting with a six-month report.", title="NY manual")]
    assert unanswerable_reason("does new york put households on simplified reporting", choice) is None
    assert unanswerable_reason("does NY put households on simplified reporting", choice) is None
    # a number as some extracted pages space it
    tty = [hit("If you are deaf or hard of hearing, call our toll-free TTY number, 1 - 800 - 325 - 0778.",
               title="Apply for a child")]
    assert unanswerable_reason("what if I'm hard of hearing? do you have a number for that?", tty) is None
    waivers = [hit("Lake County is waived from the ABAWD time limit through September.", title="Ohio waivers")]
    assert unanswerable_reason("does our county have an abawd waiver", waivers) is None
    assert unanswerable_reason("is lake county covered by an abawd waiver", waivers) is None
    email = [hit("Email the Lake County caseworkers at snap@lakecounty.example.gov.", title="Contact")]
    assert unanswerable_reason("what's the email address for the caseworkers at our dss", email) is None
    # a year in the rules that stands by no dollar figure is not that year's figure
    plans = [hit("Starting in FY 2026, FNS will increase the estimated number of exemptions.", n=i) for i in range(3)]
    assert unanswerable_reason("whats the snap benefit amount for one person for fy 2026", plans) is not None


def test_a_program_named_by_no_best_section_is_not_answered_from_them() -> None:
    """Sections about no program in particular (few mentions of any) cannot say how to get into one they never
    name; a page that names it may (doc2dial's Medicare pages mention it only now and then)."""
    rules = [hit("The household must report changes in income within 10 days.", n=i) for i in range(3)]
    assert "do not name" in (unanswerable_reason("does she qualify for free health insurance through the "
                                                 "marketplace", rules) or "")
    extra = [hit("Extra Help with Medicare prescription drug plan costs is for people with limited income.")]
    assert unanswerable_reason("do I qualify for extra help with a medicare prescription plan", extra) is None


def test_an_earlier_turns_request_does_not_count_again_in_a_follow_up() -> None:
    standalone = "whats the phone number for the snap office? how long do they have to process it?"
    question = "how long do they have to process it?"
    assert evidence(question, standalone, SNAP_RULES) > 0
    # a follow-up asked about another program is read as that question ("and WIC?" -> "... for WIC?")
    assert evidence("and WIC?", "how do I apply for WIC?", SNAP_RULES) == 0.0


def test_a_hostile_question_is_checked_in_bounded_time() -> None:
    """Long runs of the words the checks look for (far longer than NAVIBOT_MAX_QUESTION_CHARS lets in) cost a
    single pass, not a backtracking blow-up."""
    for text in ["ebt how much " * 20_000 + "x", "snap " + "what day " * 20_000, "ebt " + "new " * 30_000 + "x",
                 "ebt " + "check " * 20_000 + "balanc",
                 "can you " * 20_000 + "look", "did her " * 20_000 + "x", "buy " * 20_000 + "with",
                 "number for the " * 10_000 + "x", "office " * 30_000 + "x", "in " * 30_000 + "texas how much",
                 "program help " * 10_000 + "pay", "benefits " * 30_000 + "on the",
                 "ebt card " * 20_000 + "not", "order " * 30_000 + "online",
                 # session 12's patterns: the access words around a program, a duty, a state as subject, a PIN
                 "how much is medicaid " * 10_000 + "x", "apply for wic " * 10_000, "supposed to " * 20_000 + "give",
                 "does texas " * 20_000 + "how many", "pin " * 30_000 + "card", "parking " * 30_000 + "at the office",
                 # session 13's
                 "check if " + "maria " * 20_000 + "x", "why did she " * 10_000 + "x", "how many " * 20_000 + "months",
                 "is there a " * 10_000 + "claim", "food " * 30_000 + "x", "replace " * 20_000 + "snap",
                 "benefits load " * 10_000, "card " * 30_000 + "work", "after the office " * 10_000 + "closed",
                 "did ms " + "harris " * 20_000 + "x", "what time " * 20_000 + "x", "how much snap will " * 10_000,
                 "book " * 20_000 + "with the", "there's " * 20_000 + "claim on", "actual number " * 10_000,
                 "hasnt used snap " * 10_000 + "x", "card works at " * 10_000 + "x", "who's the supervisor " * 10_000,
                 "benefits get " * 20_000 + "x", "status of " * 20_000 + "x", "[dob] " * 20_000,
                 # session 16's: a named county's and the own area's waiver, what a program covers, its decision
                 # contested, a pending claim, expedited service's deadline, a local provider
                 "waiver " + "dekalb county " * 20_000, "does our county " * 10_000 + "have a waiver",
                 "does medicaid " + "in our state " * 10_000 + "cover", "medicaid got cut off " * 10_000 + "appeal",
                 "waiting on her " * 20_000 + "unemployment", "emergency snap " * 10_000 + "by when on her card",
                 "who is the " + "e&t " * 20_000 + "provider in our county", "which nonprofit " * 10_000 + "in her"]:
        started = time.perf_counter()
        unanswerable_reason(text, SNAP_RULES)
        assert time.perf_counter() - started < 0.5  # about 0.03 s: the question is read from its two ends


def test_a_long_question_is_read_from_its_start_and_its_end() -> None:
    # A pasted letter before or after the ask: the fact asked for is still found (READ_CHARS from each end).
    letter = "Dear client, your household's benefits were reviewed this month. " * 1_000
    assert "contact details" in (unanswerable_reason(letter + "whats the phone number for the snap office?",
                                                     SNAP_RULES) or "")
    assert "contact details" in (unanswerable_reason("whats the phone number for the snap office? " + letter,
                                                     SNAP_RULES) or "")
    assert unanswerable_reason(letter, SNAP_RULES) is None
